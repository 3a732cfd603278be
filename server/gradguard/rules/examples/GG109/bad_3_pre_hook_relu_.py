import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
encoder = nn.Linear(6, 8)
head = nn.Linear(8, 1)
encoder.register_full_backward_pre_hook(lambda module, grad_output: None)


def predict(x):
    h = encoder(x)
    F.relu(h, inplace=True)  # <- GG109
    return head(h)


loss = predict(torch.randn(4, 6)).pow(2).mean()
loss.backward()
