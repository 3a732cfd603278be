import torch

torch.manual_seed(0)
table = torch.zeros(4, 3, requires_grad=True)
ids = torch.tensor([0, 2, 2, 3])
targets = torch.randn(4, 3)
for epoch in range(2):
    loss = ((table[ids] - targets) ** 2).sum()
    loss.backward()
    with torch.no_grad():
        for i in ids.unique().tolist():
            table[i] -= 0.1 * table.grad[i]
    table.grad.zero_()
