import torch

from encoder.attention import SelfAttention

torch.manual_seed(0)
layer = SelfAttention()
head = torch.nn.Linear(16, 2)
opt = torch.optim.Adam([*layer.parameters(), *head.parameters()], lr=1e-3)
head_mask = torch.tensor([1.0, 1.0, 0.0, 1.0])
x = torch.randn(4, 5, 16)
y = torch.randint(0, 2, (4,))
for step in range(3):
    logits = head(layer(x, head_mask).mean(1))
    loss = torch.nn.functional.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
