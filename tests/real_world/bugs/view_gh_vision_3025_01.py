import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def norm_ip(img, low, high):
    img.clamp_(min=low, max=high)
    img.sub_(low).div_(max(high - low, 1e-5))


def norm_range(t, value_range):
    if value_range is not None:
        norm_ip(t, value_range[0], value_range[1])
    else:
        norm_ip(t, float(t.min()), float(t.max()))


def make_grid(tensor, nrow=3, normalize=False, value_range=None, scale_each=False):
    if normalize:
        tensor = tensor.clone()
        if scale_each:
            for t in tensor:
                norm_range(t, value_range)
        else:
            norm_range(tensor, value_range)
    return torch.cat([tensor[i] for i in range(tensor.size(0))], dim=-1)


net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
grids = []
for step in range(2):
    loss = F.cross_entropy(net(torch.randn(2, 3, 8, 8)), torch.tensor([0, 1]))
    opt.zero_grad()
    loss.backward()
    opt.step()
    kernels = net[0].weight
    for o_idx in range(kernels.size(0)):
        kernel_idx = kernels[o_idx, :, :, :].unsqueeze(1)
        grids.append(make_grid(kernel_idx, normalize=True, scale_each=True, nrow=3))
