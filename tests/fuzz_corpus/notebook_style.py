# %%
import torch
import torch.nn.functional as F

# %%
logits = torch.randn(2, 5, requires_grad=True)
probs = F.softmax(logits, dim=-1)
probs.clamp_(min=1e-6)
loss = -probs.log().mean()
loss.backward()

# %%
buf = torch.empty(2, 5)
torch.matmul(logits, torch.eye(5), out=buf)
hidden = logits.view(10)
hidden[3] = 0.0
for row in logits:
    row.relu_()
emb = torch.nn.Embedding(10, 4)
emb.weight[0] = 0
