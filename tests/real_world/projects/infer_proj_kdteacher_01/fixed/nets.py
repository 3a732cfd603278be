import torch.nn as nn


def teacher_net(d=10, c=4):
    return nn.Sequential(nn.Linear(d, 64), nn.ReLU(), nn.Linear(64, c))


def student_net(d=10, c=4):
    return nn.Sequential(nn.Linear(d, 16), nn.ReLU(), nn.Linear(16, c))
