import torch
from torch import nn

torch.manual_seed(0)


class FeedForward(nn.Module):
    def __init__(self, layers, activation="relu", dropout=None, last_layer_activation=False):
        super().__init__()
        n_layers = len(layers) - 1
        if dropout is None:
            dropout = [None] * n_layers
        modules = []
        for i in range(n_layers):
            modules.append(nn.Linear(layers[i], layers[i + 1]))
            activate = (i < n_layers - 1) or last_layer_activation
            if activate and activation == "relu":
                modules.append(nn.ReLU(True))
            if activate and dropout[i] is not None:
                modules.append(nn.Dropout(p=dropout[i], inplace=True))
        self.nn = nn.Sequential(*modules)

    def forward(self, x):
        return self.nn(x)


class DeepTDA(nn.Module):
    def __init__(self, layers, options):
        super().__init__()
        self.nn = FeedForward(layers, **options.get("nn", {}))

    def training_step(self, x, target_centers):
        z = self.nn(x)
        return ((z - target_centers) ** 2).mean()


model = DeepTDA(layers=[4, 8, 8, 1], options={"nn": {"dropout": [0.2, 0.4, 0.6]}})
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loss = model.training_step(torch.randn(6, 4), torch.tensor([-7.0]))
opt.zero_grad()
loss.backward()
opt.step()
