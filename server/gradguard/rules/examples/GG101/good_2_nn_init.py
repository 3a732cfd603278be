import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)
        nn.init.xavier_uniform_(self.fc.weight)
        nn.init.constant_(self.fc.bias, -2.0)

    def forward(self, x):
        return self.fc(x)


torch.manual_seed(0)
model = Classifier(4, 3)
loss = model(torch.rand(2, 4)).logsumexp(dim=1).mean()
loss.backward()
