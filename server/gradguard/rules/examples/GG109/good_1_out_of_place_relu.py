import torch
from torch import nn

torch.manual_seed(0)
features = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1),
    nn.ReLU(),
    nn.Conv2d(8, 8, 3, padding=1),
)
grads = {}


def save_grad(module, grad_input, grad_output):
    grads["conv0"] = grad_output[0]


features[0].register_full_backward_hook(save_grad)
out = features(torch.rand(2, 3, 6, 6))
out.sum().backward()
print(grads["conv0"].shape)
