import torch

from mtl.engine import AmpEngine
from mtl.model import MultiTaskNet

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
engine = AmpEngine(MultiTaskNet(), device)
x = torch.randn(32, 10)
y_cls = torch.randint(0, 3, (32,))
y_reg = x.sum(1)
for step in range(3):
    print(step, engine.step(x, y_cls, y_reg))
