import torch.nn as nn


def mlp(width=32, depth=3):
    layers, d = [], 2
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.Tanh()]
        d = width
    layers.append(nn.Linear(d, 1))
    return nn.Sequential(*layers)
