import torch
from torch import nn


class StateCache:
    def __init__(self, n_layers, batch, width):
        self.states = [torch.zeros(batch, width) for _ in range(n_layers)]

    def update(self, layer_idx, new_state):
        self.states[layer_idx].copy_(new_state)  # <- GG201


class Recurrent(nn.Module):
    def __init__(self, width, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.decay = nn.Linear(width, width)

    def forward(self, x, cache):
        state = cache.states[self.layer_idx]
        state = torch.sigmoid(self.decay(x)) * state + x  # `*` saves the cached state
        cache.update(self.layer_idx, state)
        return state


torch.manual_seed(0)
layers = [Recurrent(8, i) for i in range(2)]
cache = StateCache(2, 4, 8)
loss = 0
for chunk in torch.randn(3, 4, 8):
    x = chunk
    for layer in layers:
        x = layer(x, cache)
    loss = loss + x.pow(2).mean()
loss.backward()
