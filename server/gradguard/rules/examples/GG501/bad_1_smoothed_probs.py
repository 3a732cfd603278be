import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 3)
x = torch.randn(6, 4)
target = torch.tensor([0, 1, 2, 0, 1, 2])
probs = torch.softmax(model(x), dim=1)
probs.data.mul_(0.9).add_(0.1 / 3)  # <- GG501
loss = -probs[torch.arange(6), target].log().mean()
loss.backward()

clean = torch.softmax(model(x), dim=1) * 0.9 + 0.1 / 3
true_grad, = torch.autograd.grad(-clean[torch.arange(6), target].log().mean(), model.weight)
if not torch.allclose(model.weight.grad, true_grad):
    print("wrong gradient:", (model.weight.grad - true_grad).abs().max().item())
