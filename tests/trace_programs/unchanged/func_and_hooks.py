# torch.func transforms and a region of disable_saved_tensors_hooks: both refuse saved-tensor hooks, so
# without care a tracer makes them raise. Run plainly and under `gradguard trace`: the same output.
import torch
from torch.func import grad, hessian, jacrev, vjp, vmap


def energy(x):
    return (x.sin() * x).sum()


x = torch.linspace(-1.0, 1.0, 4, dtype=torch.float64)
print("grad", [round(v, 6) for v in grad(energy)(x).tolist()])
print("jacrev", [round(v, 6) for v in jacrev(energy)(x).tolist()])
print("hessian trace", round(hessian(energy)(x).trace().item(), 6))
out, pullback = vjp(torch.sin, x)
print("vjp", [round(v, 6) for v in pullback(torch.ones_like(x))[0].tolist()])
print("vmap grad", [round(v, 6) for v in vmap(grad(energy))(x.reshape(2, 2)).flatten().tolist()])

with torch.autograd.graph.disable_saved_tensors_hooks("this library keeps its own saved tensors"):
    w = torch.rand(3, requires_grad=True)
    (w.exp() * 2).sum().backward()
    print("backward inside the region", w.grad.shape)
    try:
        with torch.autograd.graph.save_on_cpu():
            pass
    except RuntimeError as exc:  # hooks pushed inside the region fail as they always do
        print("save_on_cpu refused:", exc)
    y = w.exp()
    y.add_(1)  # a real in-place bug inside the region: autograd itself still catches it
    try:
        y.sum().backward()
    except RuntimeError as exc:
        print("caught:", str(exc).split(":")[0])

# A program that catches autograd's error and prints it: the text is torch's own, word for word.
w = torch.rand(4, requires_grad=True)
h = w.tanh()
h.add_(1)  # overwrites the output tanh saved
try:
    h.sum().backward()
except RuntimeError as exc:
    print(type(exc).__name__, exc)

# After the region the tracer is back: this bug is traced.
w = torch.rand(3, requires_grad=True)
e = w.exp()
e.mul_(2)
e.sum().backward()
