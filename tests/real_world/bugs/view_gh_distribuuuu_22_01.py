import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MHSA(nn.Module):
    def __init__(self, n_dims, width, height, heads=4):
        super().__init__()
        self.heads = heads
        self.scale = (n_dims // heads) ** -0.5
        self.qkv = nn.Conv2d(n_dims, 3 * n_dims, kernel_size=1)
        self.rel_h = nn.Parameter(torch.randn(1, heads, n_dims // heads, 1, height) * 0.02)
        self.rel_w = nn.Parameter(torch.randn(1, heads, n_dims // heads, width, 1) * 0.02)

    def forward(self, x):
        n_batch, C, width, height = x.size()
        qkv = self.qkv(x).reshape(n_batch, 3, self.heads, C // self.heads, width * height)
        q, k, v = qkv.permute(1, 0, 2, 3, 4)
        q *= self.scale
        content_content = torch.matmul(q.permute(0, 1, 3, 2), k)
        content_position = (self.rel_h + self.rel_w).view(1, self.heads, C // self.heads, -1).permute(0, 1, 3, 2)
        content_position = torch.matmul(content_position, q)
        energy = content_content + content_position
        attention = F.softmax(energy, dim=-1)
        out = torch.matmul(v, attention.permute(0, 1, 3, 2))
        return out.reshape(n_batch, C, width, height)


class BottleneckBlock(nn.Module):
    def __init__(self, planes, size):
        super().__init__()
        self.conv1 = nn.Conv2d(planes, planes, 1)
        self.mhsa = MHSA(planes, size, size)
        self.bn = nn.BatchNorm2d(planes)

    def forward(self, x):
        return F.relu(x + self.bn(self.mhsa(F.relu(self.conv1(x)))))


net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), BottleneckBlock(16, 4), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                    nn.Linear(16, 10))
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
for step in range(2):
    images, target = torch.randn(4, 3, 4, 4), torch.randint(0, 10, (4,))
    loss = F.cross_entropy(net(images), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
