import torch


def toy_batch(seed, batch=4, length=7, vocab=20, pad=0):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(1, vocab, (batch, length), generator=g)
    tgt = src.flip(1).clone()
    tgt[:, -2:] = pad
    return src, tgt
