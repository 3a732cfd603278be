from .heatmap import HeatmapHead
from .backbone import Backbone

__all__ = ["HeatmapHead", "Backbone"]
