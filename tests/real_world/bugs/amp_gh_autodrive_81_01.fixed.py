import torch
from torch import nn as nn
from torch.nn import functional as F

torch.manual_seed(0)


class RESA(nn.Module):
    # REcurrent Feature-Shift Aggregator in RESA paper

    def __init__(self, num_channels=4, iteration=2, alpha=2.0):
        super(RESA, self).__init__()
        self.iteration = iteration
        self.alpha = alpha
        self.conv_d = nn.ModuleList(nn.Conv2d(num_channels, num_channels, (1, 3), padding=(0, 1), bias=False)
                                    for _ in range(iteration))
        self.conv_u = nn.ModuleList(nn.Conv2d(num_channels, num_channels, (1, 3), padding=(0, 1), bias=False)
                                    for _ in range(iteration))

    def forward(self, x):
        y = x
        h, w = y.shape[-2:]
        # Down
        for i in range(self.iteration):
            idx = (torch.arange(h) + h // 2 ** (self.iteration - i)) % h
            y = y + (self.alpha * F.relu(self.conv_d[i](y[:, :, idx, :])))
        # Up
        for i in range(self.iteration):
            idx = (torch.arange(h) - h // 2 ** (self.iteration - i)) % h
            y = y + (self.alpha * F.relu(self.conv_u[i](y[:, :, idx, :])))
        return y


class RESANet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Conv2d(3, 8, 3, padding=1)
        self.reducer = nn.Sequential(nn.Conv2d(8, 4, 1, bias=False), nn.BatchNorm2d(4), nn.ReLU())
        self.spatial_conv = RESA()
        self.decoder = nn.Conv2d(4, 2, 1)

    def forward(self, x):
        x = self.reducer(F.relu(self.backbone(x)))
        x = self.spatial_conv(x)
        return self.decoder(x)


class LaneDetTrainer(object):
    def __init__(self, mixed_precision=True):
        self.model = RESANet()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.06, momentum=0.9)
        self.criterion = nn.CrossEntropyLoss()
        self.mixed_precision = mixed_precision
        self.dataloader = [(torch.rand(2, 3, 8, 8), torch.randint(0, 2, (2, 8, 8))) for _ in range(2)]

    def run(self):
        scaler = torch.amp.GradScaler("cpu", enabled=self.mixed_precision)
        self.model.train()
        for inputs, labels in self.dataloader:
            self.optimizer.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.mixed_precision):
                outputs = self.model(inputs)
                loss = self.criterion(outputs.float(), labels)
            scaler.scale(loss).backward()
            scaler.step(self.optimizer)
            scaler.update()


runner = LaneDetTrainer(mixed_precision=True)
runner.run()
