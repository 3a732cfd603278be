import torch
import torch.nn.functional as F

torch.manual_seed(0)


def residual_activation_inplace(x, residual, activation, inplace):
    for r in residual:
        x += r
    return activation(x, inplace=inplace)


x = (torch.randn(3, 4) - 1.0).requires_grad_()
x2 = x.clone()
residual = [torch.rand(3, 4), torch.rand(3, 4)]
y = residual_activation_inplace(x2, residual, F.relu, inplace=True)
grad, = torch.autograd.grad(y.sum(), (x,))

# the gradient the user expects: d relu(x + r1 + r2) / dx, computed out of place
torch.manual_seed(0)
x_ref = (torch.randn(3, 4) - 1.0).requires_grad_()
y_ref = F.relu(x_ref + residual[0] + residual[1])
ref_grad, = torch.autograd.grad(y_ref.sum(), (x_ref,))

if not torch.allclose(grad, ref_grad):
    print("wrong gradient: d relu_(x)/dx taken w.r.t. the tensor relu_ overwrote (all ones), not the pre-activation input")
else:
    print("gradient ok")
