from llama.model import Attention
