import torch
from torch.distributions import constraints

torch.manual_seed(0)


class Transform(object):
    def __call__(self, x):
        return self._call(x)


class BoltzmannTransform(Transform):
    """Transform from unconstrained space to the simplex via `y = exp(x)` then normalizing."""
    domain = constraints.real
    codomain = constraints.simplex
    event_dim = 1

    def __eq__(self, other):
        return isinstance(other, BoltzmannTransform)

    def _call(self, x):
        logprobs = x
        probs = (logprobs - logprobs.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        probs = y
        return probs.log()


logits = torch.randn(3, 4, requires_grad=True)
transform = BoltzmannTransform()
probs = transform(logits)
loss = -(probs * torch.tensor([0.1, 0.2, 0.3, 0.4])).sum()
loss.backward()
print(logits.grad.shape)
