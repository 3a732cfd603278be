import torch
import torch.nn.functional as F

from models import PreActNet

torch.manual_seed(0)
net = PreActNet()
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
x = torch.randn(64, 12)
y = (x[:, 0] > 0).long() + 2 * (x[:, 1] > 0).long()
for epoch in range(3):
    loss = F.cross_entropy(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(epoch, loss.item())
