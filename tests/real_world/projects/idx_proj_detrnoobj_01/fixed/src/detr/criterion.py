import torch
import torch.nn as nn
import torch.nn.functional as F


class SetCriterion(nn.Module):
    def __init__(self, n_classes, eos_coef=0.1):
        super().__init__()
        self.n_classes, self.eos_coef = n_classes, eos_coef

    def matching_cost(self, prob, targets):
        prob = prob[..., :-1]
        return -prob.gather(-1, targets.clamp(max=prob.shape[-1] - 1).unsqueeze(-1)).squeeze(-1)

    def forward(self, outputs, targets):
        logits = outputs["pred_logits"]
        prob = logits.softmax(-1)
        cost = self.matching_cost(prob, targets)
        order = cost.argsort(dim=1)
        matched = targets.gather(1, order)
        weight = torch.ones(self.n_classes + 1)
        weight[-1] = self.eos_coef
        ce = F.cross_entropy(logits.transpose(1, 2), matched, weight)
        return ce + 0.1 * (prob * prob).sum(-1).mean()
