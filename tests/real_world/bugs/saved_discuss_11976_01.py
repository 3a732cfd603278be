import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv1_p = nn.Conv2d(8, 8, 3, padding=1)
        self.shortcut = nn.Conv2d(3, 8, 1)

    def forward(self, input):
        some_layer = self.shortcut(input)
        x = self.conv1(input)  # main branch
        x_p = self.conv1_p(x)  # another branch
        x += some_layer  # main branch
        return x, x_p


net = Net()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
input = torch.randn(2, 3, 8, 8)

for step in range(2):
    optimizer.zero_grad()
    x, x_p = net(input)
    loss = x.pow(2).mean() + x_p.pow(2).mean()
    loss.backward()
    optimizer.step()
