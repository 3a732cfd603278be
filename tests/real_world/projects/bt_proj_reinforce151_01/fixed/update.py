import torch


def finish_episode(policy, optimizer, gamma=0.99):
    R, returns = 0.0, []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + 1e-6)
    policy_loss = torch.stack([-lp * ret for lp, ret in zip(policy.saved_log_probs, returns)]).sum()
    optimizer.zero_grad()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
