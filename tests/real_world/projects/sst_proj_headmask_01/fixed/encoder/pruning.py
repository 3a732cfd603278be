def apply_head_mask(probs, head_mask):
    return probs * head_mask[None, :, None, None]
