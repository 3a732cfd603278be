from .modeling import MiniLM, MiniLMConfig
from .lora import add_lora

__all__ = ["MiniLM", "MiniLMConfig", "add_lora"]
