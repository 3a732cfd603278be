import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self, d_in=6, d_hidden=8, d_out=3, ablate=None):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)
        self.ablate = ablate

    def apply_ablation(self):
        if self.ablate is not None:
            with torch.no_grad():
                self.fc2.weight[:, self.ablate] = 0.0

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


def run_experiment(ablate=None, steps=2):
    model = MLP(ablate=ablate)
    model.apply_ablation()
    opt = torch.optim.Adam(model.fc1.parameters(), lr=1e-3)
    for _ in range(steps):
        x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


run_experiment(ablate=3)
