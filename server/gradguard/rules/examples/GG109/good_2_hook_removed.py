import torch
from torch import nn

torch.manual_seed(0)
features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(8, 2, 1))
grads = []
handle = features[0].register_full_backward_hook(lambda module, grad_in, grad_out: grads.append(grad_out[0]))
# the explanation is done: remove the hook before training with the in-place ReLU again
handle.remove()
opt = torch.optim.SGD(features.parameters(), lr=0.1)
for _ in range(2):
    loss = features(torch.rand(2, 3, 6, 6)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
