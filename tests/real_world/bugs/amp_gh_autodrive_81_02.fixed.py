import torch
from torch import nn as nn
from torch.nn import functional as F

torch.manual_seed(0)


class SpatialConv(nn.Module):
    # SCNN

    def __init__(self, num_channels=4):
        super().__init__()
        self.conv_d = nn.Conv2d(num_channels, num_channels, (1, 3), padding=(0, 1))
        self.conv_u = nn.Conv2d(num_channels, num_channels, (1, 3), padding=(0, 1))
        self.conv_r = nn.Conv2d(num_channels, num_channels, (3, 1), padding=(1, 0))
        self.conv_l = nn.Conv2d(num_channels, num_channels, (3, 1), padding=(1, 0))

    def forward(self, input):
        output = input
        vertical = [True, True, False, False]
        reverse = [False, True, False, True]
        convs = [self.conv_d, self.conv_u, self.conv_r, self.conv_l]
        for ver, rev, conv in zip(vertical, reverse, convs):
            dim = 2 if ver else 3
            slices = list(output.split(1, dim=dim))
            order = range(len(slices) - 2, 0, -1) if rev else range(1, len(slices))
            for i in order:
                prev = slices[i + 1] if rev else slices[i - 1]
                slices[i] = slices[i] + F.relu(conv(prev))
            output = torch.cat(slices, dim=dim)
        return output


class SCNNNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Conv2d(3, 8, 3, padding=1)
        self.reducer = nn.Sequential(nn.Conv2d(8, 4, 1, bias=False), nn.BatchNorm2d(4), nn.ReLU())
        self.spatial_conv = SpatialConv()
        self.decoder = nn.Conv2d(4, 2, 1)

    def forward(self, x):
        x = self.reducer(F.relu(self.backbone(x)))
        x = self.spatial_conv(x)
        return self.decoder(x)


class LaneDetTrainer(object):
    def __init__(self, mixed_precision=True):
        self.model = SCNNNet()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.06, momentum=0.9)
        self.criterion = nn.CrossEntropyLoss()
        self.mixed_precision = mixed_precision
        self.dataloader = [(torch.rand(2, 3, 6, 6), torch.randint(0, 2, (2, 6, 6))) for _ in range(2)]

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
