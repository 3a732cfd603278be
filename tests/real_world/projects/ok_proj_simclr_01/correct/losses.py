import torch
import torch.nn.functional as F


def info_nce_loss(features, n_views=2, temperature=0.5):
    n = features.shape[0] // n_views
    labels = torch.cat([torch.arange(n) for _ in range(n_views)])
    labels = (labels[None, :] == labels[:, None]).float()
    features = F.normalize(features, dim=1)
    similarity = features @ features.T
    mask = torch.eye(labels.shape[0], dtype=torch.bool)
    labels = labels[~mask].view(labels.shape[0], -1)
    similarity = similarity[~mask].view(similarity.shape[0], -1)
    positives = similarity[labels.bool()].view(labels.shape[0], -1)
    negatives = similarity[~labels.bool()].view(similarity.shape[0], -1)
    logits = torch.cat([positives, negatives], dim=1)
    logits /= temperature
    return F.cross_entropy(logits, torch.zeros(logits.shape[0], dtype=torch.long))
