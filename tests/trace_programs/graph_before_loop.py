# expect-kind: backward-twice
# expect-error: Trying to backward through the graph a second time
# Labels made from weights that require grad, once, before the loop: every minibatch loss backpropagates into
# their graph, which the first backward() freed.
import torch

torch.manual_seed(0)
X = torch.randn(40, 2)
true_w = torch.randn(2, 1, requires_grad=True)
Y = X @ true_w  # expect: save, carry
w = torch.zeros(2, 1, requires_grad=True)
for i in range(0, 40, 10):
    loss = ((X[i:i + 10] @ w - Y[i:i + 10]) ** 2).mean()
    loss.backward()  # expect: backward, freed
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
