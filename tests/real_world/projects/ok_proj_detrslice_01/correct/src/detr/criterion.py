import torch
import torch.nn as nn
import torch.nn.functional as F


class SetCriterion(nn.Module):
    def __init__(self, n_classes, eos_coef=0.1):
        super().__init__()
        self.n_classes, self.eos_coef = n_classes, eos_coef
        empty_weight = torch.ones(n_classes + 1)
        empty_weight[-1] = eos_coef
        self.register_buffer("empty_weight", empty_weight)

    @torch.no_grad()
    def matching_cost(self, logits, targets):
        prob = logits.flatten(0, 1).softmax(-1)
        prob[:, -1] = 0.0
        cost = -prob.gather(-1, targets.flatten().unsqueeze(-1)).squeeze(-1)
        return cost.view(targets.shape)

    def forward(self, outputs, targets):
        logits = outputs["pred_logits"]
        order = self.matching_cost(logits, targets).argsort(dim=1)
        matched = targets.gather(1, order)
        return F.cross_entropy(logits.transpose(1, 2), matched, self.empty_weight)
