import torch
import torch.nn as nn

torch.manual_seed(0)


class ViTDecoder(nn.Module):
    def __init__(self, num_tokens=4, dim=8, patch_dim=6):
        super().__init__()
        self.de_pos_embedding = nn.Parameter(torch.randn(1, num_tokens, dim))
        self.transformer = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU())
        self.to_pixel = nn.Linear(dim, patch_dim)

    def forward(self, token):
        x = token
        x += self.de_pos_embedding
        x = self.transformer(x)
        return self.to_pixel(x)


encoder = nn.Linear(6, 8)
quantizer = nn.Linear(8, 8)
decoder_a = ViTDecoder()
decoder_b = ViTDecoder()
params = [*encoder.parameters(), *quantizer.parameters(), *decoder_a.parameters(), *decoder_b.parameters()]
optimizer = torch.optim.Adam(params, lr=1e-4)

patches = torch.rand(2, 4, 6)
quant = quantizer(torch.tanh(encoder(patches)))
rec_a = decoder_a(quant)
rec_b = decoder_b(quant)  # Above error will occur when backwarding, as the quant is modified by the above inplace operation here
loss = ((rec_a - patches) ** 2).mean() + ((rec_b - patches) ** 2).mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
