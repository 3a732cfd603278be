import math

import torch

torch.manual_seed(0)
PI = math.pi


class Envelope(torch.nn.Module):
    def __init__(self, exponent):
        super().__init__()
        self.p = exponent + 1
        self.a = -(self.p + 1) * (self.p + 2) / 2
        self.b = self.p * (self.p + 2)
        self.c = -self.p * (self.p + 1) / 2

    def forward(self, x):
        p, a, b, c = self.p, self.a, self.b, self.c
        x_pow_p0 = x.pow(p - 1)
        x_pow_p1 = x_pow_p0 * x
        x_pow_p2 = x_pow_p1 * x
        return 1. / x + a * x_pow_p0 + b * x_pow_p1 + c * x_pow_p2


class BesselBasisLayer(torch.nn.Module):
    def __init__(self, num_radial, cutoff=5.0, envelope_exponent=5):
        super().__init__()
        self.cutoff = cutoff
        self.envelope = Envelope(envelope_exponent)
        self.freq = torch.nn.Parameter(torch.Tensor(num_radial))
        self.reset_parameters()

    def reset_parameters(self):
        torch.arange(1, self.freq.numel() + 1, out=self.freq).mul_(PI)

    def forward(self, dist):
        dist = (dist.unsqueeze(-1) / self.cutoff)
        return self.envelope(dist) * (self.freq * dist).sin()


class DimeNet(torch.nn.Module):
    def __init__(self, hidden_channels, out_channels, num_radial=4, cutoff=5.0, envelope_exponent=5):
        super().__init__()
        self.rbf = BesselBasisLayer(num_radial, cutoff, envelope_exponent)
        self.lin = torch.nn.Linear(num_radial, out_channels)

    def forward(self, dist):
        return self.lin(self.rbf(dist))


model = DimeNet(hidden_channels=5, out_channels=19)
out = model(torch.rand(6) + 0.5)
out.sum().backward()
