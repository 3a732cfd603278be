import torch

torch.manual_seed(0)
W = torch.randn(2, 2, requires_grad=True)
steps, dt = 5, 0.1
state = torch.tensor([1.0, 0.0])
traj = [state]
for t in range(steps):
    state = state + dt * torch.tanh(state @ (W * 0.5))
    traj.append(state)
traj = torch.stack(traj)
loss = (traj[-1] - torch.tensor([0.0, 1.0])).pow(2).sum()
loss.backward()
