import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvLayer(nn.Sequential):
    def __init__(self, in_channels, out_channels, kernel=3, stride=1):
        super().__init__()
        self.add_module('conv', nn.Conv2d(in_channels, out_channels, kernel_size=kernel,
                                          stride=stride, padding=kernel // 2, bias=False))
        self.add_module('norm', nn.BatchNorm2d(out_channels))
        self.add_module('relu', nn.ReLU(inplace=True))


model = nn.Sequential(ConvLayer(3, 4), ConvLayer(4, 4))
model.eval()

for layer in model:
    conv, bn = layer.conv, layer.norm
    cconv = nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size,
                      conv.stride, conv.padding, bias=True)
    w = bn.weight / torch.sqrt(bn.running_var + bn.eps)
    W = conv.weight * w.view(-1, 1, 1, 1)
    b = bn.bias - bn.running_mean * w
    cconv.weight[:, :, :, :] = W[:, :, :, :]
    cconv.bias[:] = b[:]
    layer.conv = cconv
    layer.norm = nn.Identity()

out = model(torch.randn(1, 3, 8, 8))
print(out.shape)
