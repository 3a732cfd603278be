import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GatedBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gates = nn.Linear(2 * dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x, state=None):
        B, T, D = x.shape
        c, n = state if state is not None else (torch.zeros(B, D), torch.ones(B, D))
        outs = []
        for t in range(T):
            i, f, o = self.gates(torch.cat([x[:, t], c / n], -1)).chunk(3, -1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(x[:, t])
            n = torch.sigmoid(f) * n + torch.sigmoid(i)
            outs.append(torch.sigmoid(o) * c / n)
        return self.out(torch.stack(outs, 1)), (c, n)


class StatefulTrainer:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
        self.state = None

    def train(self, stream, targets, chunk=4):
        for start in range(0, stream.size(1), chunk):
            feats = stream[:, start:start + chunk]
            enc_out, self.state = self.model(feats, self.state)
            loss = F.mse_loss(enc_out, targets[:, start:start + chunk])
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


StatefulTrainer(GatedBlock(6)).train(torch.randn(2, 12, 6), torch.randn(2, 12, 6))
