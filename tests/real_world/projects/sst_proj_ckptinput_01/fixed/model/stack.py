import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

from model.block import ResidualMLP
from model.scaling import halve_


class CheckpointedStack(nn.Module):
    def __init__(self, d=16, depth=3, gradient_checkpointing=True):
        super().__init__()
        self.blocks = nn.ModuleList(ResidualMLP(d) for _ in range(depth))
        self.gradient_checkpointing = gradient_checkpointing

    def forward(self, h):
        for block in self.blocks:
            if self.gradient_checkpointing and self.training:
                delta = checkpoint(block, h, use_reentrant=False)
            else:
                delta = block(h)
            h = halve_(torch.tanh(h + delta))
        return h
