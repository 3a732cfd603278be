import copy

import torch
import torch.nn.functional as F


def sequence_logps(model, ids):
    logits = model(ids[:, :-1])
    return F.log_softmax(logits, dim=-1).gather(2, ids[:, 1:, None]).squeeze(-1).sum(-1)


class FrozenReference:
    def __init__(self, policy):
        self.model = copy.deepcopy(policy).eval()

    @torch.inference_mode()
    def logps(self, chosen, rejected):
        return sequence_logps(self.model, chosen), sequence_logps(self.model, rejected)
