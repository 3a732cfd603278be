import torch
from torch import nn

torch.manual_seed(0)
qkv_conv = nn.Conv2d(3, 12, kernel_size=1)
qkv = qkv_conv(torch.randn(2, 3, 4, 4))
q, k, v = torch.split(qkv, [4, 4, 4], dim=1)
batch, channels, height, width = q.size()
# merging the batch and channel dimensions of a piece cut out of dimension 1 cannot be a view: torch copies
q = q.reshape(batch * channels, height, width)
q *= 2 ** -0.5
loss = (q.reshape(batch, channels, height, width) * k).sum() + v.mean()
loss.backward()
