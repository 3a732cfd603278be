import torch
import torch.nn.functional as F

from gnn.conv import GCNConv
from gnn.norm import gcn_norm

torch.manual_seed(0)
n = 12
adj = torch.zeros(n, n)
for i in range(n - 2):
    adj[i, (i + 1) % (n - 2)] = adj[(i + 1) % (n - 2), i] = 1.0
norm_adj = gcn_norm(adj)
conv1, conv2 = GCNConv(6, 16), GCNConv(16, 3)
opt = torch.optim.Adam([*conv1.parameters(), *conv2.parameters()], lr=1e-2)
x, y = torch.randn(n, 6), torch.randint(0, 3, (n,))
for epoch in range(5):
    h = F.relu(conv1(x, norm_adj))
    h = F.dropout(h, p=0.5, training=True)
    loss = F.cross_entropy(conv2(h, norm_adj), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
