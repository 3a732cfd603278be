from lora.layers import LoraEmbedding, LoraLinear
from lora.prepare import enable_input_require_grads
