import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def bn_update(loader, model):
    momenta = {}
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.running_mean = torch.zeros_like(module.running_mean)
            module.running_var = torch.ones_like(module.running_var)
            momenta[module] = module.momentum
    model.train()
    n = 0
    with torch.no_grad():
        for input in loader:
            b = input.size(0)
            momentum = b / (n + b)
            for module in momenta.keys():
                module.momentum = momentum
            model(input)
            n += b
    for module, m in momenta.items():
        module.momentum = m


model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Conv2d(4, 1, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loader = [torch.randn(2, 1, 8, 8) for _ in range(3)]
for x in loader:
    loss = F.binary_cross_entropy_with_logits(model(x), (x > 0).float())
    opt.zero_grad()
    loss.backward()
    opt.step()
bn_update(loader, model)
for x in loader[:1]:
    loss = F.binary_cross_entropy_with_logits(model(x), (x > 0).float())
    opt.zero_grad()
    loss.backward()
    opt.step()
