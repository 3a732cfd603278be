import torch.nn as nn


class LinearProbe(nn.Module):
    def __init__(self, d_feat=24, n_classes=5):
        super().__init__()
        self.fc = nn.Linear(d_feat, n_classes)

    def forward(self, feats):
        return self.fc(feats)
