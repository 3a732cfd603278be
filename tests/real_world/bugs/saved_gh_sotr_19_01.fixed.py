import torch
from torch import nn

torch.manual_seed(0)


class MaskBranch(nn.Module):
    def __init__(self, in_channels=4, conv_dims=4, num_levels=3):
        super().__init__()
        self.convs_all_levels = nn.ModuleList()
        for i in range(num_levels):
            self.convs_all_levels.append(nn.Sequential(
                nn.Conv2d(in_channels, conv_dims, 3, padding=1, bias=False),
                nn.GroupNorm(2, conv_dims),
                nn.ReLU(),
            ))
        self.conv_pred = nn.Conv2d(conv_dims, 2, 1)

    def forward(self, features):
        feature_add_all_level = self.convs_all_levels[0](features[0])
        for i in range(1, len(features)):
            mask_feat = features[i]
            feature_add_all_level = feature_add_all_level + self.convs_all_levels[i](mask_feat)
        return self.conv_pred(feature_add_all_level)


branch = MaskBranch()
opt = torch.optim.SGD(branch.parameters(), lr=0.01)
features = [torch.randn(2, 4, 8, 8) for _ in range(3)]
for it in range(2):
    opt.zero_grad()
    loss = branch(features).pow(2).mean()
    loss.backward()
    opt.step()
