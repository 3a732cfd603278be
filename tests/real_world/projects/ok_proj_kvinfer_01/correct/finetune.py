import torch

from llama import Attention
from llama.generation import generate

torch.manual_seed(0)
attn = Attention()
opt = torch.optim.Adam(attn.parameters(), lr=1e-3)
seq, target = torch.randn(2, 10, 16), torch.randn(2, 10, 16)
for step in range(2):
    out = attn(seq)
    loss = ((out - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
print(generate(attn, seq[:, :4]).shape)
