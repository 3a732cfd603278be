import torch

from src.detr import SetCriterion, TinyDETR

torch.manual_seed(0)
model, criterion = TinyDETR(), SetCriterion(n_classes=3)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randn(4, 12)
targets = torch.randint(0, 4, (4, 5))
for step in range(3):
    loss = criterion(model(x), targets)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
