"""Generate synthetic data for experiments."""
import math
from collections import defaultdict

import numpy as np
import torch
from torch import nn

torch.manual_seed(0)


class BlocksBasisExpansion(nn.Module):
    def __init__(self, in_size, out_size, kernel_size, n_basis=6):
        super().__init__()
        self.in_size, self.out_size, self.kernel_size = in_size, out_size, kernel_size
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


class R2Conv(nn.Module):
    def __init__(self, in_size, out_size, kernel_size, bias=False):
        super().__init__()
        self.kernel_size = kernel_size
        self._basisexpansion = BlocksBasisExpansion(in_size, out_size, kernel_size)
        self.weights = nn.Parameter(torch.zeros(self.basisexpansion.dimension()), requires_grad=True)
        generalized_he_init(self.weights.data, self.basisexpansion)

    @property
    def basisexpansion(self):
        return self._basisexpansion

    def forward(self, input):
        filter = self.basisexpansion(self.weights)
        filter = filter.reshape(filter.shape[0], filter.shape[1], self.kernel_size, self.kernel_size)
        return nn.functional.conv2d(input, filter)


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


def generate_2d_rot8(n_tasks=3):
    conv = R2Conv(1, 3, kernel_size=3, bias=False)
    xs, ys, ws = [], [], []
    for task_idx in range(n_tasks):
        generalized_he_init(conv.weights.data, conv.basisexpansion)
        inp = torch.randn(4, 1, 8, 8)
        result = conv(inp).detach().cpu().numpy()
        xs.append(inp.detach().cpu().numpy())
        ys.append(result)
        ws.append(conv.weights.detach().cpu().numpy())
    xs, ys, ws = np.stack(xs), np.stack(ys), np.stack(ws)
    return xs, ys, ws


xs, ys, ws = generate_2d_rot8()
print(xs.shape, ys.shape, ws.shape)
