from .quantize import Quantize
