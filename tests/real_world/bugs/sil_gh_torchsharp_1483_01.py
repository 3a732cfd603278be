import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MuZeroNet(nn.Module):
    def __init__(self, obs_dim=6, hidden=8, n_actions=3):
        super().__init__()
        self.represent = nn.Linear(obs_dim, hidden)
        self.dynamics = nn.Linear(hidden + n_actions, hidden + 1)
        self.prediction = nn.Linear(hidden, n_actions + 1)
        self.n_actions = n_actions


def scale_gradient(tensor, scale):
    tensor.register_hook(lambda grad: grad.mul_(scale))
    return tensor


def unroll_loss(net, obs, actions, target_values, target_rewards, unroll_steps):
    state = torch.tanh(net.represent(obs))
    loss = 0.0
    for step in range(unroll_steps):
        pred = net.prediction(state)
        policy_logits, value = pred[:, :-1], pred[:, -1]
        a = F.one_hot(actions[:, step], net.n_actions).float()
        nxt = net.dynamics(torch.cat([state, a], dim=1))
        state, reward = torch.tanh(nxt[:, :-1]), nxt[:, -1]
        reward_loss = scale_gradient(F.mse_loss(reward, target_rewards[:, step]), 1.0 / unroll_steps)
        loss = loss + F.mse_loss(value, target_values[:, step]) + F.cross_entropy(policy_logits, actions[:, step]) + reward_loss
    return loss


net = MuZeroNet()
obs, actions = torch.randn(4, 6), torch.randint(0, 3, (4, 3))
values, rewards = torch.randn(4, 3), torch.randn(4, 3)
unroll_loss(net, obs, actions, values, rewards, 3).backward()
grads = [p.grad.clone() for p in net.parameters()]

# the gradient the training means: only the reward terms are scaled
net.zero_grad()
state = torch.tanh(net.represent(obs))
loss = 0.0
for step in range(3):
    pred = net.prediction(state)
    a = F.one_hot(actions[:, step], 3).float()
    nxt = net.dynamics(torch.cat([state, a], dim=1))
    state, reward = torch.tanh(nxt[:, :-1]), nxt[:, -1]
    loss = loss + F.mse_loss(pred[:, -1], values[:, step]) + F.cross_entropy(pred[:, :-1], actions[:, step])
    loss = loss + F.mse_loss(reward, rewards[:, step]) / 3
loss.backward()
if not all(torch.allclose(g, p.grad, atol=1e-6) for g, p in zip(grads, net.parameters())):
    print("wrong gradient: the in-place hook scaled the value and policy terms too")
else:
    print("gradient ok")
