from moe.layer import MoELayer
from moe.dispatch import TokenDispatcher
