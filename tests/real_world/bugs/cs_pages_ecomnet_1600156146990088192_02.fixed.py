import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self, input_size=6, hidden_size=8, batch_size=4):
        super(Net, self).__init__()
        self.flat = nn.Flatten(start_dim=2)
        self.lstm = nn.LSTM(input_size, hidden_size, batch_first=True)
        self.h0 = torch.zeros(1, batch_size, hidden_size)
        self.c0 = torch.zeros(1, batch_size, hidden_size)
        self.model1 = nn.Sequential(nn.Linear(hidden_size, 3))

    def forward(self, inp):
        to_in = self.flat(inp)
        f, _ = self.lstm(to_in, (self.h0, self.c0))
        (self.h0, self.c0) = (_[0].detach(), _[1].detach())
        return self.model1(f[:, -1])


net = Net()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(3):
    inp = torch.randn(4, 5, 2, 3)
    target = torch.randint(0, 3, (4,))
    loss = loss_fn(net(inp), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
