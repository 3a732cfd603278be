import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Signals(Dataset):
    def __init__(self, n):
        self.x = torch.randn(n, 4)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i]


def train(critic, loader, critic_iters, epochs=2):
    opt = torch.optim.SGD(critic.parameters(), lr=0.01)
    for epoch in range(epochs):
        # the penalty is expensive: once per epoch, on the first batch
        penalty = critic(next(iter(loader))).pow(2).mean()
        for x in loader:
            for _ in range(critic_iters):
                loss = critic(x).mean() + penalty
                opt.zero_grad()
                loss.backward()  # <- GG404
                opt.step()


torch.manual_seed(0)
train(nn.Linear(4, 1), DataLoader(Signals(8), batch_size=4), critic_iters=1)
