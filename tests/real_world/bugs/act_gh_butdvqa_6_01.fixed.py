import torch
import torch.nn as nn
from torch.nn.utils import weight_norm

torch.manual_seed(0)


class SimpleClassifier(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, dropout):
        super(SimpleClassifier, self).__init__()
        layers = [
            weight_norm(nn.Linear(in_dim, hid_dim), dim=None),
            nn.ReLU(),
            nn.Dropout(dropout, inplace=False),
            weight_norm(nn.Linear(hid_dim, out_dim), dim=None)
        ]
        self.main = nn.Sequential(*layers)

    def forward(self, x):
        logits = self.main(x)
        return logits


def instance_bce_with_logits(logits, labels):
    loss = nn.functional.binary_cross_entropy_with_logits(logits, labels)
    return loss * labels.size(1)


def train(model, train_loader, num_epochs, optim):
    for epoch in range(num_epochs):
        model.train()
        for v, a in train_loader:
            pred = model(v)
            loss = instance_bce_with_logits(pred, a)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            optim.step()
            optim.zero_grad()


model = SimpleClassifier(6, 8, 3, 0.5)
optim = torch.optim.Adamax(model.parameters())
loader = [(torch.randn(4, 6), torch.rand(4, 3)) for _ in range(2)]
train(model, loader, 1, optim)
