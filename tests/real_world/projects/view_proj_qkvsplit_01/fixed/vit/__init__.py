from vit.attention import Attention
from vit.model import TinyViT
