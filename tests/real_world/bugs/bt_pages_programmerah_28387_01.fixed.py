import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    """one network with two outputs, each with its own loss"""

    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head1 = nn.Linear(16, 1)
        self.head2 = nn.Linear(16, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.head1(h), self.head2(h)


net = Net()
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)

for step in range(2):
    x = torch.randn(4, 8)
    y1, y2 = torch.randn(4, 1), torch.randn(4, 1)
    output1, output2 = net(x)
    loss1 = criterion(output1, y1)
    loss2 = criterion(output2, y2)
    optimizer.zero_grad()
    loss1.backward(retain_graph=True)  # Keep the intermediate arguments after backward.
    loss2.backward()
    optimizer.step()  # update parameters
