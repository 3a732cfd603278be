import torch


def batchify(n_tokens=200, bsz=4, ntoken=30, seed=0):
    g = torch.Generator().manual_seed(seed)
    data = torch.randint(0, ntoken, (n_tokens,), generator=g)
    return data[: (n_tokens // bsz) * bsz].view(bsz, -1)


def get_batch(source, i, bptt=8):
    seq_len = min(bptt, source.shape[1] - 1 - i)
    return source[:, i:i + seq_len], source[:, i + 1:i + 1 + seq_len]
