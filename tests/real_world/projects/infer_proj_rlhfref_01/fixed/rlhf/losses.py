import torch.nn.functional as F


def kl_penalised_loss(policy_logits, ref_probs, actions, rewards, beta=0.1):
    logp = F.log_softmax(policy_logits, dim=-1)
    kl = (ref_probs * (ref_probs.log() - logp)).sum(-1).mean()
    chosen = logp.gather(-1, actions[..., None]).squeeze(-1).sum(-1)
    return -(rewards * chosen).mean() + beta * kl
