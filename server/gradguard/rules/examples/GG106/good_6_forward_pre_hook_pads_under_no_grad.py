import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class CenterPadding(nn.Module):
    def __init__(self, multiple):
        super().__init__()
        self.multiple = multiple

    @torch.no_grad()
    def forward(self, x):
        pad = (-x.shape[-1]) % self.multiple
        return F.pad(x, (pad // 2, pad - pad // 2, pad // 2, pad - pad // 2))


backbone = nn.Conv2d(3, 8, kernel_size=4, stride=4)
# pad every input to a multiple of the patch size before the backbone runs
backbone.register_forward_pre_hook(lambda module, args: CenterPadding(4)(args[0]))
opt = torch.optim.AdamW(backbone.parameters(), lr=1e-4)
loss = backbone(torch.rand(2, 3, 14, 14)).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
