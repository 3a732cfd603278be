import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, vocab=20, dim=8, z_dim=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.mu, self.logvar = nn.Linear(dim, z_dim), nn.Linear(dim, z_dim)

    def forward(self, x):
        _, h = self.rnn(self.emb(x))
        mu, logvar = self.mu(h[-1]), self.logvar(h[-1])
        return mu + torch.randn_like(mu) * (0.5 * logvar).exp(), mu, logvar


class Decoder(nn.Module):
    def __init__(self, vocab=20, z_dim=4, c_dim=2, T=6):
        super().__init__()
        self.out = nn.Linear(z_dim + c_dim, T * vocab)
        self.T, self.vocab = T, vocab

    def forward(self, z, c):
        return self.out(torch.cat([z, c], -1)).view(-1, self.T, self.vocab)


def train_vae_with_attr_loss(encoder, decoder, discriminator, x, c, kl_weight=0.1, lambda_c=0.1):
    params = list(encoder.parameters()) + list(decoder.parameters())
    vae_optimizer = torch.optim.Adam(params, lr=1e-3)
    z, mu, logvar = encoder(x)
    logits = decoder(z, c)
    recon_loss = F.cross_entropy(logits.reshape(-1, 20), x.reshape(-1))
    kl = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
    soft_sentence = F.softmax(logits, -1)
    l_attr_c = F.cross_entropy(discriminator(soft_sentence.mean(1)), c.argmax(-1))
    vae_optimizer.zero_grad()
    l_attr_c.backward()
    total_vae_loss = recon_loss + kl_weight * kl + lambda_c * l_attr_c
    total_vae_loss.backward()
    vae_optimizer.step()


x = torch.randint(0, 20, (3, 6))
c = F.one_hot(torch.tensor([0, 1, 1]), 2).float()
train_vae_with_attr_loss(Encoder(), Decoder(), nn.Linear(20, 2), x, c)
