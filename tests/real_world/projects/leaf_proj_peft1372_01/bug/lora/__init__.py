from lora.layers import LoraEmbedding
from lora.prepare import prepare_model_for_kbit_training
