import torch
import torch.nn as nn

torch.manual_seed(0)


class NNUE(nn.Module):
    def __init__(self, num_features=32, num_real_features=24, L1=16, factorized=False):
        super().__init__()
        self.num_real_features = num_real_features
        self.input = nn.Linear(num_features, L1)
        self.l1 = nn.Linear(2 * L1, 8)
        self.output = nn.Linear(8, 1)
        if factorized:
            self._zero_virtual_feature_weights()

    def _zero_virtual_feature_weights(self):
        with torch.no_grad():
            self.input.weight[:, self.num_real_features:] = 0.0

    def forward(self, us, them, w_in, b_in):
        w = self.input(w_in)
        b = self.input(b_in)
        l0 = torch.clamp(us * torch.cat([w, b], dim=1) + them * torch.cat([b, w], dim=1), 0.0, 1.0)
        return self.output(torch.clamp(self.l1(l0), 0.0, 1.0))


def train(factorized):
    model = NNUE(factorized=factorized)
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0)
    for _ in range(2):
        us = torch.ones(8, 1)
        w_in, b_in = torch.rand(8, 32), torch.rand(8, 32)
        loss = (torch.sigmoid(model(us, 1 - us, w_in, b_in)) - torch.rand(8, 1)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


train(factorized=True)
