import torch


class GANTrainer:
    def __init__(self, G, D, lr=1e-4, z_dim=5):
        self.G, self.D, self.z_dim = G, D, z_dim
        self.opt_G = torch.optim.Adam(G.parameters(), lr=lr)
        self.opt_D = torch.optim.Adam(D.parameters(), lr=lr)

    def train_step(self, real):
        z = torch.randn(real.shape[0], self.z_dim)
        fake = self.G(z)
        prob_real = self.D(real)
        prob_fake = self.D(fake)
        d_loss = -torch.mean(torch.log(prob_real) + torch.log(1.0 - prob_fake))
        g_loss = torch.mean(torch.log(1.0 - prob_fake))

        self.opt_D.zero_grad()
        d_loss.backward(retain_graph=True)
        self.opt_D.step()

        self.opt_G.zero_grad()
        g_loss.backward()
        self.opt_G.step()
        return d_loss.item(), g_loss.item()
