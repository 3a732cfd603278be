import torch


def focal_loss(pred, gt, alpha=2, beta=4, eps=1e-4):
    pred = pred.clamp(min=eps, max=1 - eps)
    pos = gt.eq(1).float()
    neg = 1 - pos
    pos_loss = torch.log(pred) * torch.pow(1 - pred, alpha) * pos
    neg_loss = torch.log(1 - pred) * torch.pow(pred, alpha) * torch.pow(1 - gt, beta) * neg
    num_pos = pos.sum().clamp(min=1)
    return -(pos_loss.sum() + neg_loss.sum()) / num_pos
