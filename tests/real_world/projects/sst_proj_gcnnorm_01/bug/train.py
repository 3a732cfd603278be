import torch
import torch.nn.functional as F

from graph import ring_graph
from model import GCN

torch.manual_seed(0)
adj = ring_graph()
x = torch.randn(adj.shape[0], 6)
y = torch.randint(0, 3, (adj.shape[0],))
model = GCN()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(5):
    out = model(x, adj)
    loss = F.cross_entropy(torch.nan_to_num(out), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("loss", loss.item())
