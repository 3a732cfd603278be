import torch

torch.manual_seed(0)
w = torch.randn(3, 4, requires_grad=True)
feats = torch.tanh(w) * 2
feats_t = feats.t()
feats_t.detach_()  # <- GG111
loss = (feats_t ** 2).sum() + w.sum()
loss.backward()
