import torch
from torch import nn

torch.manual_seed(0)
hidden = nn.Linear(5, 8)
out_layer = nn.Linear(8, 3)
opt = torch.optim.SGD([*hidden.parameters(), *out_layer.parameters()], lr=0.1, momentum=0.9)
x = torch.randn(12, 5)
y = torch.randint(0, 3, (12,))
teacher_probs = torch.softmax(torch.randn(12, 3), dim=1)
logits = out_layer(torch.relu(hidden(x)))
hard_loss = nn.functional.cross_entropy(logits, y)
hard_loss.backward(retain_graph=True)
opt.step()  # <- GG401
soft_loss = nn.functional.kl_div(torch.log_softmax(logits, dim=1), teacher_probs, reduction="batchmean")
soft_loss.backward()
opt.step()
