import torch
import torch.nn.functional as F

from lm import GatedEmbeddingLM

torch.manual_seed(0)
model = GatedEmbeddingLM()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
ids = torch.randint(0, 30, (4, 9))
for step in range(3):
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 30), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
