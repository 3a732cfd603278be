import torch
import torch.nn as nn
from torch.nn.functional import mse_loss
from torch.nn.utils import clip_grad_norm_

torch.manual_seed(0)


class Args:
    imagination_horizon = 3
    gamma = 0.9
    lambda_ = 0.95
    clip_grad_norm = 100


args = Args()
state_dim, rnn_hidden_dim, action_dim = 4, 6, 2


def lambda_target(rewards, values, gamma, lambda_):
    V_lambda = torch.zeros_like(rewards)
    H = rewards.shape[0] - 1
    V_n = torch.zeros_like(rewards)
    V_n[H] = values[H]
    for n in range(1, H + 1):
        # n-step return
        V_n[:-n] = (gamma ** n) * values[n:]
        for k in range(1, n + 1):
            if k == n:
                V_n[:-n] += (gamma ** (n - 1)) * rewards[k:]
            else:
                V_n[:-n] += (gamma ** (k - 1)) * rewards[k:-n + k]
        # add lambda_ weighted n-step return
        if n == H:
            V_lambda += (lambda_ ** (H - 1)) * V_n
        else:
            V_lambda += (1 - lambda_) * (lambda_ ** (n - 1)) * V_n
    return V_lambda


rssm_prior = nn.Linear(state_dim + rnn_hidden_dim + action_dim, state_dim + rnn_hidden_dim)
reward_model = nn.Linear(state_dim + rnn_hidden_dim, 1)
value_model = nn.Sequential(nn.Linear(state_dim + rnn_hidden_dim, 8), nn.ELU(), nn.Linear(8, 1))
action_model = nn.Sequential(nn.Linear(state_dim + rnn_hidden_dim, 8), nn.ELU(), nn.Linear(8, action_dim), nn.Tanh())
value_optimizer = torch.optim.Adam(value_model.parameters(), lr=8e-5)
action_optimizer = torch.optim.Adam(action_model.parameters(), lr=8e-5)

for update_step in range(2):
    flatten_states = torch.randn(5, state_dim)
    flatten_rnn_hiddens = torch.randn(5, rnn_hidden_dim)

    # imagine trajectories with the action model
    imaginated_states, imaginated_rnn_hiddens = [], []
    state, rnn_hidden = flatten_states, flatten_rnn_hiddens
    for h in range(args.imagination_horizon):
        action = action_model(torch.cat([state, rnn_hidden], dim=1))
        nxt = torch.tanh(rssm_prior(torch.cat([state, rnn_hidden, action], dim=1)))
        state, rnn_hidden = nxt[:, :state_dim], nxt[:, state_dim:]
        imaginated_states.append(state)
        imaginated_rnn_hiddens.append(rnn_hidden)
    imaginated_states = torch.stack(imaginated_states)
    imaginated_rnn_hiddens = torch.stack(imaginated_rnn_hiddens)
    flatten_imaginated = torch.cat([imaginated_states, imaginated_rnn_hiddens], dim=-1)

    imaginated_rewards = reward_model(flatten_imaginated)
    imaginated_values = value_model(flatten_imaginated)
    lambda_target_values = lambda_target(imaginated_rewards, imaginated_values, args.gamma, args.lambda_)

    # update value model
    value_loss = 0.5 * mse_loss(imaginated_values, lambda_target_values.detach())
    value_optimizer.zero_grad()
    value_loss.backward(retain_graph=True)
    clip_grad_norm_(value_model.parameters(), args.clip_grad_norm)

    # update action model (multiply -1 for gradient ascent)
    action_loss = -1 * (lambda_target_values.mean())
    action_optimizer.zero_grad()
    action_loss.backward()
    clip_grad_norm_(action_model.parameters(), args.clip_grad_norm)

    # step both only after both backward passes
    value_optimizer.step()
    action_optimizer.step()
