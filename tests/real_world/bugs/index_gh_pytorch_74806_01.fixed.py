import torch
from torch import Tensor

torch.manual_seed(0)


def reduce(x: Tensor, y: Tensor, z: Tensor, op) -> Tensor:
    tensor = torch.zeros((5,), dtype=torch.float32, requires_grad=False)
    tensor[0] = x
    tensor[1] = y
    tensor[3] = z

    tensor[2] = op(tensor[0].clone(), tensor[1].clone())
    tensor[4] = op(tensor[2].clone(), tensor[3].clone())
    return tensor[4]


inputs = [
    torch.randn((1,), requires_grad=True),
    torch.randn((1,), requires_grad=True),
    torch.randn((1,), requires_grad=True),
]

out = reduce(*inputs, op=torch.add)
grad = torch.autograd.grad(out, inputs, torch.randn_like(out))
print(f'grad => {grad}')

out = reduce(*inputs, op=torch.mul)
grad = torch.autograd.grad(out, inputs, torch.randn_like(out))
print(f'grad => {grad}')
