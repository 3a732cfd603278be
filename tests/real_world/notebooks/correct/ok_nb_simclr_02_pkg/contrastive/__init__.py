from .augment import TwoViews
from .models import ProjectionEncoder

__all__ = ["ProjectionEncoder", "TwoViews"]
