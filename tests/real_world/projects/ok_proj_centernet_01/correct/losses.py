import torch


def focal_loss(pred, gt, alpha=2):
    pos = gt.eq(1).float()
    pos_loss = torch.log(pred) * torch.pow(1 - pred, alpha) * pos
    neg_loss = torch.log(1 - pred) * torch.pow(pred, alpha) * (1 - pos)
    return -(pos_loss.sum() + neg_loss.sum()) / pos.sum().clamp(min=1)
