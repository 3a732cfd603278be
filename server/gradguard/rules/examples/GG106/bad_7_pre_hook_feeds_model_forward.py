import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


@torch.inference_mode()
def pad_to_patches(x, patch=4):
    pad = (-x.shape[-1]) % patch
    return F.pad(x, (0, pad, 0, pad))


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, 8, kernel_size=4, stride=4)
        self.head = nn.Linear(8, 1)

    def forward(self, images):
        tokens = self.patch_embed(images).flatten(2).mean(-1)  # <- GG106
        return self.head(tokens)


model = Backbone()
model.register_forward_pre_hook(lambda module, args: (pad_to_patches(args[0]),))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss = model(torch.rand(2, 3, 14, 14)).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
