def to_preview_(x):
    """Map a batch to [0, 1] for a preview grid."""
    return x.clamp_(-1, 1).add_(1).div_(2)
