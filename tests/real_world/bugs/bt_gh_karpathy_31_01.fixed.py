import torch
import torch.nn.functional as F

words = ["emma", "olivia", "ava"]
chars = sorted(list(set("".join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
xs, ys = [], []
for w in words[:1]:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        xs.append(stoi[ch1])
        ys.append(stoi[ch2])
xs = torch.tensor(xs)
ys = torch.tensor(ys)

g = torch.Generator().manual_seed(2147483647)
W = torch.randn((27, 27), generator=g, requires_grad=True)

xenc = F.one_hot(xs, num_classes=27).float()

for k in range(3):
    # Forward Pass (rerun every iteration)
    logits = (xenc @ W)  # log-counts
    counts = logits.exp()  # equivalent N
    prob = counts / counts.sum(1, keepdims=True)
    loss = - prob[torch.arange(5), ys].log().mean()
    print(loss.item())

    # Backward Pass
    W.grad = None
    loss.backward()

    # update the weights
    W.data += -0.1 * W.grad
