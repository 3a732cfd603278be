from .model import TinyDETR
from .criterion import SetCriterion
