from .discriminator import PatchDiscriminator
from .layers import conv_block
