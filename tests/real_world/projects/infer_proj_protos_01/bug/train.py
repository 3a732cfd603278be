import torch
import torch.nn.functional as F

from protonet.evaluate import refresh_prototypes
from protonet.model import ProtoClassifier

torch.manual_seed(0)
model = ProtoClassifier()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
support_x = torch.randn(40, 10)
support_y = torch.arange(40) % 4
for epoch in range(3):
    if epoch % 2 == 0:
        refresh_prototypes(model, support_x, support_y)
    loss = F.cross_entropy(model(support_x), support_y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(epoch, loss.item())
