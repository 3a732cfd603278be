from layers.embed import TanhEmbed
from layers.mlp import Mlp
