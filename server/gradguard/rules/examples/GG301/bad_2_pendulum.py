import torch

torch.manual_seed(0)
length = torch.tensor(1.5, requires_grad=True)
steps, dt, g = 6, 0.05, 9.81
theta = torch.zeros(steps + 1)
omega = torch.zeros(steps + 1)
theta[0] = 0.3
for t in range(steps):
    omega[t + 1] = omega[t] - dt * g / length * torch.sin(theta[t])
    theta[t + 1] = theta[t] + dt * omega[t + 1]  # <- GG301
loss = (theta[-1] - 0.1) ** 2
loss.backward()
