import os
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=3)
        self.fc1 = nn.Linear(4 * 3 * 3, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = x.view(-1, 4 * 3 * 3)
        return F.log_softmax(self.fc1(x), dim=1)


class Args:
    lr, momentum, epochs, seed, log_interval = 0.01, 0.5, 1, 1, 10


def train(rank, args, model, device, data_loader):
    torch.manual_seed(args.seed + rank)
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    for epoch in range(1, args.epochs + 1):
        train_epoch(epoch, args, model, device, data_loader, optimizer)


def train_epoch(epoch, args, model, device, data_loader, optimizer):
    model.train()
    pid = os.getpid()
    for batch_idx, (data, target) in enumerate(data_loader):
        optimizer.zero_grad()
        output = model(data.to(device))
        loss = F.nll_loss(output, target.to(device))
        loss.backward()
        optimizer.step()


def test_epoch(model, device, data_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in data_loader:
            output = model(data.to(device))
            test_loss += F.nll_loss(output, target.to(device), reduction='sum').item()  # sum up batch loss
            pred = output.max(1)[1]  # get the index of the max log-probability
            correct += pred.eq(target.to(device)).sum().item()
    test_loss /= len(data_loader)
    return test_loss, correct


model = Net()
model.share_memory()  # gradients are allocated lazily, so they are not shared here
loader = [(torch.rand(2, 1, 8, 8), torch.randint(0, 10, (2,))) for _ in range(2)]
train(0, Args(), model, torch.device("cpu"), loader)
test_epoch(model, torch.device("cpu"), loader)
