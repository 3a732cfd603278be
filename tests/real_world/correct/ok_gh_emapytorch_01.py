from copy import deepcopy

import torch
from torch import nn

torch.manual_seed(0)


class EMA(nn.Module):
    def __init__(self, model, beta=0.9999, update_after_step=1, update_every=1, inv_gamma=1.0, power=2 / 3, min_value=0.0):
        super().__init__()
        self.beta = beta
        self.online_model = [model]
        self.ema_model = deepcopy(model)
        self.ema_model.requires_grad_(False)
        self.update_every = update_every
        self.update_after_step = update_after_step
        self.inv_gamma = inv_gamma
        self.power = power
        self.min_value = min_value
        self.register_buffer('initted', torch.tensor(False))
        self.register_buffer('step', torch.tensor(0))

    @property
    def model(self):
        return self.online_model[0]

    def copy_params_from_model_to_ema(self):
        for ma_params, current_params in zip(self.ema_model.parameters(), self.model.parameters()):
            ma_params.data.copy_(current_params.data)

    def get_current_decay(self):
        epoch = (self.step - self.update_after_step - 1).clamp(min=0.)
        value = 1 - (1 + epoch / self.inv_gamma) ** - self.power
        if epoch.item() <= 0:
            return 0.
        return value.clamp(min=self.min_value, max=self.beta).item()

    def update(self):
        step = self.step.item()
        self.step += 1
        if (step % self.update_every) != 0:
            return
        if step <= self.update_after_step:
            self.copy_params_from_model_to_ema()
            return
        if not self.initted.item():
            self.copy_params_from_model_to_ema()
            self.initted.data.copy_(torch.tensor(True))
        self.update_moving_average(self.ema_model, self.model)

    @torch.no_grad()
    def update_moving_average(self, ma_model, current_model):
        current_decay = self.get_current_decay()
        for current_params, ma_params in zip(current_model.parameters(), ma_model.parameters()):
            ma_params.data.lerp_(current_params.data, 1. - current_decay)

    def __call__(self, *args, **kwargs):
        return self.ema_model(*args, **kwargs)


net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
ema = EMA(net, beta=0.9999, update_after_step=1, update_every=1)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for _ in range(4):
    loss = net(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema.update()
with torch.no_grad():
    ema_output = ema(torch.randn(1, 4))
