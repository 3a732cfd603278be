import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class conv2DBatchNormRelu(nn.Module):
    def __init__(self, in_channels, n_filters, k_size, stride, padding, bias=True):
        super(conv2DBatchNormRelu, self).__init__()
        self.cbr_unit = nn.Sequential(
            nn.Conv2d(int(in_channels), int(n_filters), kernel_size=k_size, padding=padding, stride=stride, bias=bias),
            nn.BatchNorm2d(int(n_filters)),
            nn.ReLU(inplace=True),
        )

    def forward(self, inputs):
        return self.cbr_unit(inputs)


class pspnet(nn.Module):
    def __init__(self, n_classes=3):
        super(pspnet, self).__init__()
        self.convbnrelu1_1 = conv2DBatchNormRelu(in_channels=3, k_size=3, n_filters=8, padding=1, stride=2, bias=False)
        self.cbr_final = conv2DBatchNormRelu(8, 8, 3, 1, 1, False)
        self.dropout = nn.Dropout2d(p=0.1, inplace=False)
        self.classification = nn.Conv2d(8, n_classes, 1, 1, 0)

    def forward(self, x):
        inp_shape = x.shape[2:]
        x = self.convbnrelu1_1(x)
        x = self.cbr_final(x)
        x = self.dropout(x)
        x = self.classification(x)
        return F.interpolate(x, size=inp_shape, mode="bilinear", align_corners=True)


model = pspnet()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
images, labels = torch.randn(2, 3, 8, 8), torch.randint(0, 3, (2, 8, 8))
optimizer.zero_grad()
loss = F.cross_entropy(model(images), labels)
loss.backward()
optimizer.step()
