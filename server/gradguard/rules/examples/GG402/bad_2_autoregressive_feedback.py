import torch
from torch import nn

torch.manual_seed(0)
decoder = nn.Linear(2, 2)
opt = torch.optim.SGD(decoder.parameters(), lr=0.05)
targets = torch.randn(5, 1, 2)
prev = torch.zeros(1, 2)
for t in range(5):
    pred = torch.tanh(decoder(prev))
    loss = nn.functional.mse_loss(pred, targets[t])
    opt.zero_grad()
    loss.backward(retain_graph=True)
    opt.step()
    prev = pred  # <- GG402
