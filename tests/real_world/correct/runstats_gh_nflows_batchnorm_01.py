import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


class BatchNorm(nn.Module):
    """Transform that performs batch normalization (reduced from nflows.transforms.normalization)."""

    def __init__(self, features, eps=1e-5, momentum=0.1, affine=True):
        super().__init__()
        self.momentum = momentum
        self.eps = eps
        constant = torch.log(torch.exp(torch.tensor(1 - eps)) - 1)
        self.unconstrained_weight = nn.Parameter(constant * torch.ones(features))
        self.bias = nn.Parameter(torch.zeros(features))
        self.register_buffer("running_mean", torch.zeros(features))
        self.register_buffer("running_var", torch.zeros(features))

    @property
    def weight(self):
        return F.softplus(self.unconstrained_weight) + self.eps

    def forward(self, inputs):
        if inputs.dim() != 2:
            raise ValueError("Expected 2-dim inputs, got inputs of shape: {}".format(inputs.shape))
        if self.training:
            mean, var = inputs.mean(0), inputs.var(0)
            self.running_mean.mul_(1 - self.momentum).add_(mean.detach() * self.momentum)
            self.running_var.mul_(1 - self.momentum).add_(var.detach() * self.momentum)
        else:
            mean, var = self.running_mean, self.running_var
        outputs = self.weight * ((inputs - mean) / torch.sqrt((var + self.eps))) + self.bias
        logabsdet_ = torch.log(self.weight) - 0.5 * torch.log(var + self.eps)
        logabsdet = torch.sum(logabsdet_) * inputs.new_ones(inputs.shape[0], 1)
        return outputs, logabsdet


layer = nn.Linear(3, 3)
bn = BatchNorm(3)
opt = torch.optim.Adam(list(layer.parameters()) + list(bn.parameters()), lr=1e-3)
for _ in range(3):
    z, logabsdet = bn(layer(torch.randn(8, 3)))
    loss = 0.5 * (z ** 2).sum(1).mean() - logabsdet.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
