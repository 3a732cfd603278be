from .preact import PreActBlock, PreActNet
