import torch

torch.manual_seed(0)
net = torch.nn.Linear(4, 3)
pixels = torch.rand(5, 4)
rgb = net(pixels) * 1.0
rgb[:, 1].mul_(0.5)
gray = 0.299 * rgb[:, 0] + 0.587 * rgb[:, 1] + 0.114 * rgb[:, 2]
loss = (gray - 0.5).pow(2).mean()
loss.backward()
