import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, z_dim=4):
        super().__init__()
        self.z_dim = z_dim
        self.net = nn.Sequential(nn.Linear(z_dim, 16), nn.ReLU(), nn.Linear(16, 6))

    def forward(self, z):
        return self.net(z)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def loss_nonsaturating(d, g, x_real, *, device):
    z = torch.randn(x_real.shape[0], g.z_dim, device=device)
    gz = g(z)
    dgz = F.sigmoid(d(gz))
    dx = d(x_real)

    real_label = torch.ones(x_real.shape[0], device=device)
    fake_label = torch.zeros(x_real.shape[0], device=device)
    bce_loss = F.binary_cross_entropy_with_logits
    d_loss = bce_loss(dx, real_label) + F.binary_cross_entropy(dgz, fake_label)
    g_loss = -torch.mean(torch.log(dgz))
    return d_loss, g_loss


def train(d, g, loader, device):
    d_optimizer = torch.optim.Adam(d.parameters(), lr=2e-4)
    g_optimizer = torch.optim.Adam(g.parameters(), lr=2e-4)
    for x_real in loader:
        d_loss, g_loss = loss_nonsaturating(d, g, x_real, device=device)

        d_optimizer.zero_grad()
        d_loss.backward(retain_graph=True)
        d_optimizer.step()

        g_optimizer.zero_grad()
        g_loss.backward()
        g_optimizer.step()


train(Critic(), Generator(), [torch.randn(8, 6) for _ in range(2)], torch.device("cpu"))
