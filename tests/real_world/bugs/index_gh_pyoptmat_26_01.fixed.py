import torch

torch.manual_seed(0)


class BidiagonalForwardOperator:
    """Solve the block lower-bidiagonal system (I on the diagonal, -B below it) by forward substitution."""

    def __init__(self, B):
        self.B = B
        self.nblk = B.shape[0] + 1

    def forward(self, v):
        v = v.clone()
        for i in range(1, self.nblk):
            v[i] = v[i] - torch.bmm(self.B[i - 1], v[i - 1].clone().unsqueeze(-1)).squeeze(-1)
        return v


nblk, nbat, sblk = 4, 2, 3
B = torch.randn(nblk - 1, nbat, sblk, sblk, requires_grad=True)
rhs = torch.randn(nblk, nbat, sblk, requires_grad=True)
op = BidiagonalForwardOperator(B)
sol = op.forward(rhs)
sol.pow(2).sum().backward()
