import torch
import torch.nn as nn


class Gate(nn.Module):
	def __init__(self, n):
		super().__init__()
		self.w = nn.Parameter(torch.randn(n, n))
		self.act = nn.Sigmoid()

	def forward(self, x):
		h = self.act(x @ self.w)
		h.mul_(2)	# sigmoid saved its output
		return h


model = Gate(3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
	out = model(torch.randn(2, 3))
	out.sum().backward()
	opt.step()
	opt.zero_grad()
