import torch


def get_batch(data, generator, batch_size=4, block=8):
    ix = torch.randint(len(data) - block - 1, (batch_size,), generator=generator)
    x = torch.stack([data[i:i + block] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block] for i in ix])
    return x, y
