from .criterions import label_smoothed_nll_loss
from .model import TinySeq2Seq
