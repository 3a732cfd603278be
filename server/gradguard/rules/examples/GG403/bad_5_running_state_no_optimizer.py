import torch

torch.manual_seed(0)
gain = torch.tensor(0.5, requires_grad=True)
readings = torch.randn(5)
estimate = torch.tensor(0.0)
for r in readings:
    new_estimate = estimate + torch.sigmoid(gain) * (r - estimate)
    loss = (new_estimate - r).pow(2)
    loss.backward()
    estimate = new_estimate  # <- GG403
print(gain.grad)
