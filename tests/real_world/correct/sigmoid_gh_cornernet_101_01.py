import torch
import torch.nn as nn

torch.manual_seed(0)


def _sigmoid(x):
    x = torch.clamp(x.sigmoid_(), min=1e-4, max=1 - 1e-4)
    return x


def _neg_loss(preds, gt):
    pos_inds = gt.eq(1)
    neg_inds = gt.lt(1)
    neg_weights = torch.pow(1 - gt[neg_inds], 4)
    loss = 0
    for pred in preds:
        pos_pred = pred[pos_inds]
        neg_pred = pred[neg_inds]
        pos_loss = torch.log(pos_pred) * torch.pow(1 - pos_pred, 2)
        neg_loss = torch.log(1 - neg_pred) * torch.pow(neg_pred, 2) * neg_weights
        num_pos = pos_inds.float().sum()
        loss = loss - (pos_loss.sum() + neg_loss.sum()) / max(num_pos, 1)
    return loss


class CornerHead(nn.Module):
    def __init__(self, channels=4, classes=2):
        super().__init__()
        self.tl_heats = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU(inplace=True),
                                      nn.Conv2d(channels, classes, 1))

    def forward(self, x):
        return [_sigmoid(self.tl_heats(x))]


head = CornerHead()
gt = torch.zeros(2, 2, 6, 6)
gt[0, 1, 2, 3] = 1
gt[1, 0, 4, 1] = 1
loss = _neg_loss(head(torch.randn(2, 4, 6, 6)), gt)
loss.backward()
