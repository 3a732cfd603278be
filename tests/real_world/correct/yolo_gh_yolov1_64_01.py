import torch
import torch.nn as nn

torch.manual_seed(0)


class YOLOv1(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.num_classes = num_classes
        self.layer1 = nn.Sequential(
            nn.Conv2d(3, 4, kernel_size=7, stride=2, padding=3),
            nn.BatchNorm2d(4),
            nn.LeakyReLU(),
            nn.MaxPool2d(2, 2),
        )
        self.fc1 = nn.Sequential(nn.Linear(4 * 7 * 7, 32), nn.LeakyReLU(), nn.Dropout(0.5))
        self.fc2 = nn.Sequential(nn.Linear(32, 7 * 7 * ((5) + self.num_classes)))

    def forward(self, x):
        out = self.layer1(x)
        out = out.reshape(out.size(0), -1)
        out = self.fc1(out)
        out = self.fc2(out)
        out = out.reshape((-1, 7, 7, ((5) + self.num_classes)))
        out[:, :, :, 0] = torch.sigmoid(out[:, :, :, 0])
        out[:, :, :, 5:] = torch.sigmoid(out[:, :, :, 5:])
        return out


model = YOLOv1()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
for _ in range(2):
    outputs = model(torch.randn(2, 3, 28, 28))
    loss = (outputs - torch.rand_like(outputs)).pow(2).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
