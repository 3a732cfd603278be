from typing import List, Union, cast

import torch
import torch.nn as nn

torch.manual_seed(0)


class VGG(nn.Module):
    def __init__(self, features: nn.Module, num_classes: int = 5, dropout: float = 0.5) -> None:
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((2, 2))
        self.classifier = nn.Sequential(
            nn.Linear(8 * 2 * 2, 16),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(16, 16),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(16, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.classifier(x)
        return x


def make_layers(cfg: List[Union[str, int]], batch_norm: bool = False) -> nn.Sequential:
    layers: List[nn.Module] = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            v = cast(int, v)
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            if batch_norm:
                layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            else:
                layers += [conv2d, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


for bn in (False, True):
    model = VGG(make_layers([4, "M", 8, 8, "M"], batch_norm=bn))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss = nn.functional.cross_entropy(model(torch.randn(2, 3, 8, 8)), torch.tensor([1, 4]))
    opt.zero_grad()
    loss.backward()
    opt.step()
