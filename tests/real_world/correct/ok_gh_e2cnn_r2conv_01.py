import math
from collections import defaultdict

import torch
from torch.nn import Parameter
from torch.nn.functional import conv2d, pad

torch.manual_seed(0)


class BlocksBasisExpansion(torch.nn.Module):
    def __init__(self, in_size, out_size, kernel_size, n_basis=6):
        super().__init__()
        self.register_buffer("basis", torch.randn(n_basis * in_size * out_size, out_size, in_size, kernel_size ** 2))
        self._basis_info = [
            {"in_irreps_position": i, "out_irreps_position": o, "in_irrep": "irrep_0", "out_irrep": "irrep_%d" % (b % 2)}
            for o in range(out_size) for i in range(in_size) for b in range(n_basis)
        ]

    def dimension(self):
        return len(self._basis_info)

    def get_basis_info(self):
        return iter(self._basis_info)

    def forward(self, weights):
        return torch.einsum("b,boik->oik", weights, self.basis)


def _generalized_he_init_variances(basisexpansion):
    vars = torch.ones((basisexpansion.dimension(),))
    inputs_count = defaultdict(lambda: set())
    basis_count = defaultdict(int)
    basis_info = list(basisexpansion.get_basis_info())
    for attr in basis_info:
        i, o = attr["in_irreps_position"], attr["out_irreps_position"]
        in_irrep, out_irrep = attr["in_irrep"], attr["out_irrep"]
        inputs_count[o].add(in_irrep)
        basis_count[(in_irrep, o)] += 1
    for o in inputs_count.keys():
        inputs_count[o] = len(inputs_count[o])
    for w, attr in enumerate(basis_info):
        i, o = attr["in_irreps_position"], attr["out_irreps_position"]
        in_irrep, out_irrep = attr["in_irrep"], attr["out_irrep"]
        vars[w] = 1. / math.sqrt(inputs_count[o] * basis_count[(in_irrep, o)])
    return vars


def generalized_he_init(tensor, basisexpansion):
    assert tensor.shape == (basisexpansion.dimension(),)
    vars = _generalized_he_init_variances(basisexpansion)
    tensor[:] = vars * torch.randn_like(tensor)


class R2Conv(torch.nn.Module):
    def __init__(self, in_size, out_size, kernel_size, padding=1, bias=True, initialize=True):
        super(R2Conv, self).__init__()
        self.kernel_size = kernel_size
        self.padding = padding
        self._reversed_padding_repeated_twice = (padding, padding, padding, padding)
        if bias:
            self.register_buffer("bias_expansion", torch.ones(out_size, 1))
            self.bias = Parameter(torch.zeros(1), requires_grad=True)
            self.register_buffer("expanded_bias", torch.zeros(out_size))
        else:
            self.bias = None
            self.expanded_bias = None
        self._basisexpansion = BlocksBasisExpansion(in_size, out_size, kernel_size)
        self.weights = Parameter(torch.zeros(self.basisexpansion.dimension()), requires_grad=True)
        self.register_buffer("filter", torch.zeros(out_size, in_size, kernel_size, kernel_size))
        if initialize:
            # by default, the weights are initialized with a generalized form of He's weight initialization
            generalized_he_init(self.weights.data, self.basisexpansion)

    @property
    def basisexpansion(self):
        return self._basisexpansion

    def expand_parameters(self):
        filter = self.basisexpansion(self.weights)
        filter = filter.reshape(filter.shape[0], filter.shape[1], self.kernel_size, self.kernel_size)
        if self.bias is None:
            bias = None
        else:
            bias = self.bias_expansion @ self.bias
        return filter, bias

    def forward(self, input):
        if not self.training:
            filter = self.filter
            bias = self.expanded_bias
        else:
            # retrieve the filter and the bias
            filter, bias = self.expand_parameters()
        return conv2d(pad(input, self._reversed_padding_repeated_twice, 'constant'), filter, bias=bias)

    def train(self, mode=True):
        if mode:
            if hasattr(self, "filter"):
                del self.filter
            if hasattr(self, "expanded_bias"):
                del self.expanded_bias
        elif self.training:
            # avoid re-computation of the filter and the bias on multiple consecutive calls of `.eval()`
            filter, bias = self.expand_parameters()
            self.register_buffer("filter", filter)
            if bias is not None:
                self.register_buffer("expanded_bias", bias)
            else:
                self.expanded_bias = None
        return super(R2Conv, self).train(mode)


model = torch.nn.Sequential(R2Conv(1, 4, 3), torch.nn.ReLU(inplace=True), R2Conv(4, 2, 3))
model.train()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(2):
    x, y = torch.randn(4, 1, 8, 8), torch.randn(4, 2, 8, 8)
    loss = torch.nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
model.eval()
with torch.no_grad():
    print(model(torch.randn(1, 1, 8, 8)).shape)
