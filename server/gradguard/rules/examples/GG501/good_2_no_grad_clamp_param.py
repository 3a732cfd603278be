import torch

torch.manual_seed(0)
log_rates = torch.randn(4, requires_grad=True)
counts = torch.tensor([1.0, 0.0, 3.0, 2.0])
for step in range(3):
    rates = log_rates.exp().clamp(max=1.0)
    nll = (rates - counts * log_rates).sum()
    nll.backward()
    with torch.no_grad():
        log_rates -= 0.1 * log_rates.grad
        log_rates.clamp_(max=0.0)
    log_rates.grad = None
