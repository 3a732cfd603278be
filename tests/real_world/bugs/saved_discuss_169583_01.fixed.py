import torch

print(torch.__version__)
t = torch.arange(3.0, requires_grad=True)
u = 2 * t
uexp = u.exp()
loss = uexp.sum()
u[0] = 666
loss.backward(retain_graph=True)
uexp = uexp.clone()
uexp[0] = 666
loss.backward()
