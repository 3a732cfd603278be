import torch

torch.manual_seed(0)
kernel = torch.randn(3, 3, requires_grad=True)
kernel.view(-1)[4].fill_(1.0)  # <- GG102
img = torch.randn(1, 1, 6, 6)
out = torch.nn.functional.conv2d(img, kernel.view(1, 1, 3, 3))
loss = out.pow(2).mean()
loss.backward()
