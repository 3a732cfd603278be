import torch

from gan.nets import critic, generator
from gan.penalty import gradient_penalty


def train(iters=2, n_critic=3):
    torch.manual_seed(0)
    D, G = critic(), generator()
    opt_D = torch.optim.Adam(D.parameters(), lr=1e-4, betas=(0.5, 0.9))
    opt_G = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.5, 0.9))
    for it in range(iters):
        real = torch.randn(16, 6) + 2.0
        fake = G(torch.randn(16, 3)).detach()
        for _ in range(n_critic):
            gp = gradient_penalty(D, real, fake)
            loss_D = D(fake).mean() - D(real).mean() + gp
            opt_D.zero_grad()
            loss_D.backward()
            opt_D.step()
        loss_G = -D(G(torch.randn(16, 3))).mean()
        opt_G.zero_grad()
        loss_G.backward()
        opt_G.step()
        print(it, loss_D.item(), loss_G.item())


train()
