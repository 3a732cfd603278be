import torch

torch.manual_seed(0)
w_f, h_f = 6, 6
conv = torch.nn.Conv2d(2, 2, 3, padding=1)
gate = torch.nn.Linear(4, 1)
x11 = conv(torch.randn(1, 2, w_f, h_f))
xx1 = gate(torch.randn(1, 4))
quad = torch.zeros_like(x11, dtype=torch.bool)
quad[:, :, 0:int(w_f / 2), 0:int(h_f / 2)] = True
quad[:, :, int(w_f / 2):, int(h_f / 2):] = True
x11 = torch.where(quad, x11 * xx1[0], x11)
loss = x11.sum()
loss.backward()
