from .model import NeRF
from .rays import get_rays, sample_along_rays

__all__ = ["NeRF", "get_rays", "sample_along_rays"]
