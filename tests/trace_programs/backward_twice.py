# expect-kind: backward-twice
# expect-error: Trying to backward through the graph a second time
import torch

w = torch.rand(3, requires_grad=True)
h = torch.zeros(3)
for step in range(3):
    h = torch.tanh(h + w)  # expect: save, carry
    loss = h.sum()
    loss.backward()  # expect: backward, freed
