from .preact_resnet import PreActNet
