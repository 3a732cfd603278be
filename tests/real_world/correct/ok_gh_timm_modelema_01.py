from copy import deepcopy

import torch
import torch.nn as nn

torch.manual_seed(0)


class ModelEmaV2(nn.Module):
    """ Model Exponential Moving Average V2 """

    def __init__(self, model, decay=0.9999, device=None):
        super(ModelEmaV2, self).__init__()
        # make a copy of the model for accumulating moving average of weights
        self.module = deepcopy(model)
        self.module.eval()
        self.decay = decay
        self.device = device  # perform ema on different device from model if set

    def _update(self, model, update_fn):
        with torch.no_grad():
            for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
                if self.device is not None:
                    model_v = model_v.to(device=self.device)
                ema_v.copy_(update_fn(ema_v, model_v))

    def update(self, model):
        self._update(model, update_fn=lambda e, m: self.decay * e + (1. - self.decay) * m)

    def set(self, model):
        self._update(model, update_fn=lambda e, m: m)


def train_one_epoch(model, loader, optimizer, loss_fn, model_ema=None):
    model.train()
    for batch_idx, (input, target) in enumerate(loader):
        output = model(input)
        loss = loss_fn(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if model_ema is not None:
            model_ema.update(model)


model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5))
model_ema = ModelEmaV2(model, decay=0.998)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.rand(2, 3, 6, 6), torch.randint(0, 5, (2,))) for _ in range(3)]
train_one_epoch(model, loader, optimizer, nn.CrossEntropyLoss(), model_ema)
