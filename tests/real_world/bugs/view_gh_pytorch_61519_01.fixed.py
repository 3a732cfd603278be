import torch
from torch import nn

torch.manual_seed(0)
# Get the model
mod = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())


# Hook your layer
def fwd_hook(module, input, output):
    global activation
    activation = output


def bwd_hook(module, gradinput, gradoutput):
    global gradient
    gradient = gradoutput[0]


mod[2].register_forward_hook(fwd_hook)
mod[2].register_full_backward_hook(bwd_hook)

# Forward & backward
out = mod(torch.rand((1, 3, 8, 8)))
out.sum().backward()
print(gradient.shape)
