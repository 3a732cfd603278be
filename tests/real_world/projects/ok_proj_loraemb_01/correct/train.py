import torch
import torch.nn as nn
import torch.nn.functional as F

from lora import LoraEmbedding, LoraLinear, enable_input_require_grads

torch.manual_seed(0)
embed, mix, head = nn.Embedding(40, 16), nn.Linear(16, 16), nn.Linear(16, 40)
for m in (embed, mix, head):
    m.requires_grad_(False)
enable_input_require_grads(embed)
model = nn.Sequential(LoraEmbedding(embed), LoraLinear(mix), nn.ReLU(), head)
opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
ids = torch.randint(0, 40, (4, 10))
for step in range(3):
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 40), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
