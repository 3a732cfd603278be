import torch
import torch.nn.functional as F

from lm import RNNModel, repackage_hidden


def train(model, data, lr=1.0, bptt=8):
    hidden = model.init_hidden(data.shape[0])
    for i in range(0, data.shape[1] - 1, bptt):
        x, y = data[:, i:i + bptt], data[:, i + 1:i + 1 + bptt]
        x = x[:, : y.shape[1]]
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        out, hidden = model(x, hidden)
        loss = F.cross_entropy(out.reshape(-1, 30), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
    return loss.item()


torch.manual_seed(0)
data = torch.randint(0, 30, (4, 41))
print(train(RNNModel(), data))
