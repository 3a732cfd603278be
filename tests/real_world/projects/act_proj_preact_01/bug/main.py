import torch
import torch.nn.functional as F

from models import PreActNet
from utils import accuracy, make_split

torch.manual_seed(0)
net = PreActNet()
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
x, y = make_split()
for epoch in range(3):
    logits = net(x)
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(epoch, loss.item(), accuracy(logits, y))
