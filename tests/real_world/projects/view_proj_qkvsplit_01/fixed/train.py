import torch
import torch.nn.functional as F

from vit import TinyViT

torch.manual_seed(0)
model = TinyViT()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
images = torch.randn(8, 8, 8)
labels = torch.randint(0, 3, (8,))
for epoch in range(3):
    loss = F.cross_entropy(model(images), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(epoch, loss.item())
