import torch
from torch import nn

# A max-norm constraint on the weights only (`"bias" not in name`), applied between the forward and backward:
# the second Linear saved its weight, so backward computes the first layer's gradient with the rescaled one.
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
x = torch.randn(6, 4)
loss = model(x).pow(2).sum()
for name, param in model.named_parameters():
    if "bias" not in name:
        norm = param.data.norm(2, dim=1, keepdim=True)
        param.data.mul_(torch.clamp(norm, 0, 0.5) / (norm + 1e-8))  # <- GG501
loss.backward()

torch.manual_seed(0)
reference = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
reference(x).pow(2).sum().backward()
if not torch.allclose(model[0].weight.grad, reference[0].weight.grad):
    print("wrong gradient:", (model[0].weight.grad - reference[0].weight.grad).abs().max().item())
