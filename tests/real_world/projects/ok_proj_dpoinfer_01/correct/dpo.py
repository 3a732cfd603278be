import torch.nn.functional as F

from reference import sequence_logps


def dpo_loss(policy, ref_chosen, ref_rejected, chosen, rejected, beta=0.1):
    pi_chosen, pi_rejected = sequence_logps(policy, chosen), sequence_logps(policy, rejected)
    logits = (pi_chosen - pi_rejected) - (ref_chosen - ref_rejected)
    return -F.logsigmoid(beta * logits).mean()
