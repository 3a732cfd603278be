import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class BDRAR(nn.Module):
    def __init__(self):
        super(BDRAR, self).__init__()
        self.layer0 = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU())
        self.down4 = nn.Sequential(nn.Conv2d(8, 4, 1, bias=False), nn.BatchNorm2d(4), nn.ReLU())
        self.refine = nn.Sequential(
            nn.Conv2d(4, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
            nn.Dropout(0.1), nn.Conv2d(4, 1, 1)
        )
        for m in self.modules():
            if isinstance(m, nn.ReLU):
                m.inplace = True

    def forward(self, x):
        layer0 = self.layer0(x)
        down4 = self.down4(layer0)
        predict = self.refine(down4)
        return F.interpolate(predict, size=x.size()[2:], mode='bilinear', align_corners=False)


net = BDRAR().train()
optimizer = torch.optim.SGD(net.parameters(), lr=5e-3, momentum=0.9)
inputs, labels = torch.randn(2, 3, 8, 8), torch.rand(2, 1, 8, 8)
optimizer.zero_grad()
loss = F.binary_cross_entropy_with_logits(net(inputs), labels)
loss.backward()
optimizer.step()
