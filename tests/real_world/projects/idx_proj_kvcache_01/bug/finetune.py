import torch

from llama import Attention

torch.manual_seed(0)
attn = Attention()
opt = torch.optim.Adam(attn.parameters(), lr=1e-3)
prompt, answer = torch.randn(2, 6, 16), torch.randn(2, 4, 16)
target = torch.randn(2, 4, 16)
for step in range(2):
    attn.cache.reset()
    prompt_out = attn(prompt, start_pos=0)
    out = attn(answer, start_pos=6)
    loss = ((out - target) ** 2).mean() + 0.1 * prompt_out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
