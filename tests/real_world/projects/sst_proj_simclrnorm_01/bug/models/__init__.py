from .encoder import Encoder
from .projector import ProjectionHead
