from .model import SpeechLM
from .peft_utils import enable_input_require_grads, freeze_base
