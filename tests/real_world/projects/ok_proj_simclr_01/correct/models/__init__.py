from .resnet_simclr import SimCLRNet
