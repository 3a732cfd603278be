def halve_(h):
    """Scale activations by 1/2 without allocating."""
    return h * 0.5
