from .encoder import Encoder, ProjectionHead
