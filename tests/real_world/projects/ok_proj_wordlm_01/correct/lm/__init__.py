from lm.model import RNNModel
from lm.utils import repackage_hidden
