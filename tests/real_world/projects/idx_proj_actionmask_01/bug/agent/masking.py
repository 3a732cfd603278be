def apply_action_mask(probs, valid):
    probs[~valid] = 0.0
    return probs / probs.sum(dim=-1, keepdim=True)
