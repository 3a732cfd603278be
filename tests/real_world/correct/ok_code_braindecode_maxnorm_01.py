import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Conv2dWithConstraint(nn.Conv2d):
    def __init__(self, *args, max_norm=1, **kwargs):
        self.max_norm = max_norm
        super().__init__(*args, **kwargs)

    def forward(self, x):
        self.weight.data = torch.renorm(self.weight.data, p=2, dim=0, maxnorm=self.max_norm)
        return super().forward(x)


class EEGNet(nn.Module):
    def __init__(self, n_chans=4, n_classes=2, F1=4, D=2):
        super().__init__()
        self.conv_temporal = nn.Conv2d(1, F1, (1, 5), padding=(0, 2), bias=False)
        self.bnorm_temporal = nn.BatchNorm2d(F1)
        self.conv_spatial = Conv2dWithConstraint(F1, F1 * D, (n_chans, 1), max_norm=1, groups=F1, bias=False)
        self.bnorm_1 = nn.BatchNorm2d(F1 * D)
        self.pool = nn.AvgPool2d((1, 4))
        self.classifier = nn.Linear(F1 * D * 4, n_classes)

    def forward(self, x):
        x = self.bnorm_temporal(self.conv_temporal(x.unsqueeze(1)))
        x = self.pool(F.elu(self.bnorm_1(self.conv_spatial(x))))
        return self.classifier(x.flatten(1))


model = EEGNet()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(2):
    x, y = torch.randn(3, 4, 16), torch.tensor([0, 1, 1])
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
