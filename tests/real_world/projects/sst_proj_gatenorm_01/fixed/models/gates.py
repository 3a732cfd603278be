import torch


def sigmoid_gate(x, proj):
    return torch.sigmoid(proj(x))
