import torch

torch.manual_seed(0)
W = torch.randn(2, 2, requires_grad=True) * 0.5
steps, dt = 5, 0.1
traj = torch.zeros(steps + 1, 2)
traj[0] = torch.tensor([1.0, 0.0])
for t in range(steps):
    traj[t + 1] = traj[t] + dt * torch.tanh(traj[t] @ W)  # <- GG301
loss = (traj[-1] - torch.tensor([0.0, 1.0])).pow(2).sum()
loss.backward()
