import copy

import torch

from dino.heads import dino_head
from dino.loss import DINOLoss

torch.manual_seed(0)
student = dino_head()
teacher = copy.deepcopy(student)
dino_loss = DINOLoss()
opt = torch.optim.AdamW(student.parameters(), lr=1e-3)
for it in range(3):
    views = torch.randn(2, 16, 12)
    loss = dino_loss(student(views[0]), teacher(views[1]))
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for ps, pt in zip(student.parameters(), teacher.parameters()):
            pt.mul_(0.99).add_(ps.detach(), alpha=0.01)
    print(it, loss.item())
