import torch
import torch.nn.functional as F

from txl.model import MemTransformerLM

torch.manual_seed(0)
model = MemTransformerLM()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
stream = torch.randint(0, 25, (2, 40))
mems = None
for i in range(0, 32, 8):
    x, y = stream[:, i:i + 8], stream[:, i + 1:i + 9]
    logits, mems = model(x, mems)
    loss = F.cross_entropy(logits.reshape(-1, 25), y.reshape(-1))
    opt.zero_grad()
    loss.backward(retain_graph=True)
    opt.step()
    print(i, loss.item())
