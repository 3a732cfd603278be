from .model import RNNModel
