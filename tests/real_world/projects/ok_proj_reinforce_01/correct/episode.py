import torch


def finish_episode(policy, optimizer, gamma=0.99, eps=1e-6):
    R, policy_loss, returns = 0, [], []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    torch.cat([l.reshape(1) for l in policy_loss]).sum().backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
