def apply_head_mask(probs, head_mask):
    return probs.mul_(head_mask[None, :, None, None])
