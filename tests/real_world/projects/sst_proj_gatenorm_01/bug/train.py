import torch
import torch.nn.functional as F

from config import ModelConfig
from models import GatedMlp

torch.manual_seed(0)
cfg = ModelConfig()
model = GatedMlp(cfg)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(32, cfg.dim)
y = torch.randint(0, cfg.n_classes, (32,))
for it in range(5):
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("final loss", loss.item())
