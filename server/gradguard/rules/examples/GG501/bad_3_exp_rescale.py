import torch

torch.manual_seed(0)
log_rates = torch.randn(4, requires_grad=True)
counts = torch.tensor([1.0, 0.0, 3.0, 2.0])
rates = log_rates.exp()
rates.data.clamp_(max=1.0)  # <- GG501
nll = (rates - counts * log_rates).sum()
nll.backward()

clamped = log_rates.exp().clamp(max=1.0)
true_grad, = torch.autograd.grad((clamped - counts * log_rates).sum(), log_rates)
if not torch.allclose(log_rates.grad, true_grad):
    print("wrong gradient:", log_rates.grad.tolist(), "expected", true_grad.tolist())
