import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loader(n=64, dim=8, batch_size=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, dim, generator=g)
    y = (x.sum(dim=1, keepdim=True) > 0).float()
    return DataLoader(TensorDataset(x, y), batch_size=batch_size, shuffle=False)
