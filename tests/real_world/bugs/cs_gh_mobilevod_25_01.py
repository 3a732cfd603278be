import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BottleneckLSTMCell(nn.Module):
    def __init__(self, input_channels, hidden_channels):
        super(BottleneckLSTMCell, self).__init__()
        self.W = nn.Conv2d(input_channels + hidden_channels, hidden_channels, 3, padding=1)
        self.Wi = nn.Conv2d(hidden_channels, hidden_channels, 1)
        self.Wo = nn.Conv2d(hidden_channels, hidden_channels, 1)
        self.Wf = nn.Conv2d(hidden_channels, hidden_channels, 1)
        self.Wc = nn.Conv2d(hidden_channels, hidden_channels, 1)

    def forward(self, x, h, c):
        b = F.relu6(self.W(torch.cat((x, h), 1)))
        i = torch.sigmoid(self.Wi(b))
        f = torch.sigmoid(self.Wf(b))
        c = f * c + i * F.relu6(self.Wc(b))
        o = torch.sigmoid(self.Wo(b))
        h = o * F.relu6(c)
        return h, c


class MobileVOD(nn.Module):
    def __init__(self):
        super(MobileVOD, self).__init__()
        self.base = nn.Conv2d(3, 4, 3, padding=1)
        self.bottleneck_lstm1 = BottleneckLSTMCell(4, 4)
        self.head = nn.Conv2d(4, 2, 1)
        self.hidden_state = torch.zeros(1, 4, 6, 6)
        self.cell_state = torch.zeros(1, 4, 6, 6)

    def forward(self, x):
        x = F.relu(self.base(x))
        self.hidden_state, self.cell_state = self.bottleneck_lstm1(x, self.hidden_state, self.cell_state)
        return self.head(self.hidden_state)

    def detach_hidden(self):
        self.hidden_state.detach_()
        self.cell_state.detach_()


def train(loader, net, criterion, optimizer, epoch=-1):
    net.train(True)
    running_loss = 0.0
    running_classification_loss = 0.0
    for i, data in enumerate(loader):
        images, labels = data
        for image, label in zip(images, labels):
            optimizer.zero_grad()
            confidence = net(image)
            classification_loss = criterion(confidence, label)
            loss = classification_loss
            loss.backward(retain_graph=True)
            optimizer.step()

            running_loss += loss.item()
            running_classification_loss += classification_loss.item()
        net.detach_hidden()


net = MobileVOD()
optimizer = torch.optim.RMSprop(net.parameters(), lr=1e-3)
loader = [(torch.rand(3, 1, 3, 6, 6), torch.randint(0, 2, (3, 1, 6, 6))) for _ in range(2)]
train(loader, net, nn.CrossEntropyLoss(), optimizer)
