import torch
import torch.nn.functional as F

from corpus import batchify, get_batch
from lm import RNNModel


def train_epoch(model, data, opt, bptt=8):
    model.reset_state(data.shape[0])
    for i in range(0, data.shape[1] - 1, bptt):
        x, y = get_batch(data, i, bptt)
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward(retain_graph=True)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()
    return loss.item()


torch.manual_seed(0)
model = RNNModel()
opt = torch.optim.SGD(model.parameters(), lr=1.0)
print(train_epoch(model, batchify(), opt))
