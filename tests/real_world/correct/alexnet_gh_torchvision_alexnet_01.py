import torch
import torch.nn as nn

torch.manual_seed(0)


class AlexNet(nn.Module):
    def __init__(self, num_classes: int = 4, dropout: float = 0.5) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, stride=2, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(8, 8, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
        )
        self.avgpool = nn.AdaptiveAvgPool2d((2, 2))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout),
            nn.Linear(8 * 2 * 2, 16),
            nn.ReLU(inplace=True),
            nn.Dropout(p=dropout),
            nn.Linear(16, 16),
            nn.ReLU(inplace=True),
            nn.Linear(16, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.classifier(x)
        return x


model = AlexNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
for _ in range(2):
    loss = nn.functional.cross_entropy(model(torch.randn(2, 3, 16, 16)), torch.tensor([3, 0]))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
