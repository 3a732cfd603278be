import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


class TransformNet(nn.Module):
    def __init__(self, in_features, out_features, hidden_features=16):
        super().__init__()
        self.hidden_features = hidden_features
        self.net = nn.Sequential(nn.Linear(in_features, hidden_features), nn.ReLU(),
                                 nn.Linear(hidden_features, out_features), nn.ReLU())

    def forward(self, x, context=None):
        return self.net(x)


class PiecewiseRationalQuadraticCouplingTransform(nn.Module):
    def __init__(self, features=4, num_bins=3, tail_bound=3.0):
        super().__init__()
        self.num_bins = num_bins
        self.tail_bound = tail_bound
        self.identity_features = features // 2
        self.transform_features = features - self.identity_features
        self.transform_net = TransformNet(self.identity_features, self.transform_features * (3 * num_bins - 1))

    def _coupling_transform(self, inputs, transform_params):
        b, d = inputs.shape
        transform_params = transform_params.view(b, d, -1)
        unnormalized_widths = transform_params[..., :self.num_bins]
        unnormalized_heights = transform_params[..., self.num_bins:2 * self.num_bins]
        unnormalized_derivatives = transform_params[..., 2 * self.num_bins:]
        if hasattr(self.transform_net, "hidden_features"):
            unnormalized_widths = unnormalized_widths / np.sqrt(self.transform_net.hidden_features)
            unnormalized_heights = unnormalized_heights / np.sqrt(self.transform_net.hidden_features)
        widths = F.softmax(unnormalized_widths, dim=-1)
        heights = F.softmax(unnormalized_heights, dim=-1)
        derivatives = F.softplus(unnormalized_derivatives)
        outputs = inputs * (widths * heights).sum(-1) + derivatives.mean(-1)
        logabsdet = torch.log(derivatives + 1e-3).sum(-1).sum(-1)
        return outputs, logabsdet

    def forward(self, inputs):
        identity_split = inputs[:, :self.identity_features]
        transform_split = inputs[:, self.identity_features:]
        transform_params = self.transform_net(identity_split)
        transform_split, logabsdet = self._coupling_transform(transform_split, transform_params)
        return torch.cat([identity_split, transform_split], dim=1), logabsdet


flow = PiecewiseRationalQuadraticCouplingTransform()
optimizer = torch.optim.Adam(flow.parameters(), lr=1e-3)
z, logabsdet = flow(torch.randn(8, 4))
loss = -(logabsdet - 0.5 * (z ** 2).sum(1)).mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
