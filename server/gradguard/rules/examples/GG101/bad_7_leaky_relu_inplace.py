import torch
import torch.nn.functional as F

torch.manual_seed(0)
feat = torch.randn(4, 5, requires_grad=True)
F.leaky_relu(feat, 0.2, inplace=True)  # <- GG101
loss = feat.pow(2).sum()
loss.backward()
