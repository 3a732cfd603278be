import random

import torch
import torch.nn as nn

# Seq2seq decoding into a preallocated tensor: without teacher forcing the next input is read back as `outputs[t]`,
# a view of `outputs` that GRUCell saves; the next step's `outputs[t] = ...` bumps the shared counter. Which arm runs
# is random, so some batches train and others raise at backward.
torch.manual_seed(0)
random.seed(0)
cell = nn.GRUCell(2, 8)
head = nn.Linear(8, 2)


def decode(x, h, trg, teacher_forcing_ratio=0.5):
    outputs = torch.zeros(trg.shape)
    for t in range(trg.shape[0]):
        h = cell(x, h)
        outputs[t] = head(h)  # <- GG301
        teacher_force = random.random() < teacher_forcing_ratio
        x = trg[t] if teacher_force else outputs[t]
    return outputs


trg = torch.randn(4, 3, 2)
loss = (decode(torch.randn(3, 2), torch.zeros(3, 8), trg) - trg).pow(2).mean()
loss.backward()
