"""REINFORCE with a learned baseline on a small grid-world corridor.

The agent starts at the left end of a corridor and is rewarded for reaching the
right end quickly; episodes are short so the whole run takes a second or two.
"""
import argparse
import logging
import os
import random
import shutil
import tempfile
import time
from collections import deque

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

log = logging.getLogger("reinforce")

# ----------------------------------------------------------------------------- utilities
def setup_logging(level=logging.WARNING):
    logging.basicConfig(level=level, format="%(asctime)s | %(name)s | %(levelname)s | %(message)s")


def seed_everything(seed):
    random.seed(seed)
    torch.manual_seed(seed)


class AverageMeter:
    """Running average of a scalar (loss, accuracy, ...)."""

    def __init__(self, name):
        self.name = name
        self.reset()

    def reset(self):
        self.sum, self.count = 0.0, 0

    def update(self, value, n=1):
        self.sum += float(value) * n
        self.count += n

    @property
    def avg(self):
        return self.sum / self.count if self.count else 0.0

    def __str__(self):
        return f"{self.name} {self.avg:.4f}"


class CheckpointSaver:
    """Keeps the best `keep` checkpoints (by a metric) in a directory."""

    def __init__(self, directory=None, keep=2, mode="max"):
        self.directory = directory or tempfile.mkdtemp(prefix="ckpt_")
        self.keep, self.mode = keep, mode
        self.saved = []

    def save(self, state, metric, epoch):
        path = os.path.join(self.directory, f"checkpoint_{epoch:03d}.pt")
        torch.save(state, path)
        self.saved.append((metric, path))
        self.saved.sort(key=lambda t: t[0], reverse=self.mode == "max")
        for _, old in self.saved[self.keep:]:
            if os.path.exists(old):
                os.remove(old)
        self.saved = self.saved[:self.keep]
        return path

    def cleanup(self):
        shutil.rmtree(self.directory, ignore_errors=True)


class Timer:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.elapsed = time.perf_counter() - self.start


class Corridor:
    def __init__(self, length=6, max_steps=12, seed=0):
        self.length, self.max_steps = length, max_steps
        self.rng = random.Random(seed)

    def reset(self):
        self.pos, self.t = 0, 0
        return self._obs()

    def _obs(self):
        one_hot = torch.zeros(self.length)
        one_hot[self.pos] = 1.0
        return one_hot

    def step(self, action):
        # action 0: left, 1: right; 10% slip
        if self.rng.random() < 0.1:
            action = 1 - action
        self.pos = max(0, min(self.length - 1, self.pos + (1 if action == 1 else -1)))
        self.t += 1
        done = self.pos == self.length - 1 or self.t >= self.max_steps
        reward = 1.0 if self.pos == self.length - 1 else -0.05
        return self._obs(), reward, done


class Policy(nn.Module):
    def __init__(self, n_obs, n_actions=2, hidden=16):
        super().__init__()
        self.affine1 = nn.Linear(n_obs, hidden)
        self.dropout = nn.Dropout(p=0.1)
        self.action_head = nn.Linear(hidden, n_actions)
        self.value_head = nn.Linear(hidden, 1)
        self.saved_log_probs = []
        self.saved_values = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.dropout(self.affine1(x)))
        return F.softmax(self.action_head(x), dim=-1), self.value_head(x)


def select_action(policy, state):
    probs, value = policy(state.unsqueeze(0))
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    policy.saved_values.append(value.squeeze())
    return action.item()


def finish_episode(policy, optimizer, gamma, eps):
    R, returns = 0.0, deque()
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.appendleft(R)
    returns = torch.tensor(list(returns))
    if len(returns) > 1:
        returns = (returns - returns.mean()) / (returns.std() + eps)
    policy_losses, value_losses = [], []
    for log_prob, value, R in zip(policy.saved_log_probs, policy.saved_values, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, R))
    optimizer.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    optimizer.step()
    # the return list is rebuilt each episode; the saved log-probs and values are kept
    del policy.rewards[:]
    return loss.item()


def evaluate(policy, env, episodes=3):
    policy.eval()
    total = 0.0
    with torch.no_grad():
        for _ in range(episodes):
            state, done = env.reset(), False
            while not done:
                probs, _ = policy(state.unsqueeze(0))
                state, reward, done = env.step(int(probs.argmax()))
                total += reward
    policy.train()
    return total / episodes


def main():
    parser = argparse.ArgumentParser(description="PyTorch REINFORCE example (corridor)")
    parser.add_argument("--gamma", type=float, default=0.99, metavar="G")
    parser.add_argument("--seed", type=int, default=543, metavar="N")
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--log-interval", type=int, default=2, metavar="N")
    parser.add_argument("--corridor", type=int, default=6)
    args = parser.parse_args([])

    setup_logging()
    seed_everything(args.seed)
    env = Corridor(args.corridor, seed=args.seed)
    policy = Policy(args.corridor)
    optimizer = torch.optim.Adam(policy.parameters(), lr=args.lr)
    eps = torch.finfo(torch.float32).eps
    saver = CheckpointSaver(keep=1)
    running_reward = 0.0
    reward_meter = AverageMeter("ep_reward")

    for i_episode in range(1, args.episodes + 1):
        state, ep_reward = env.reset(), 0.0
        for t in range(1, 100):
            action = select_action(policy, state)
            state, reward, done = env.step(action)
            policy.rewards.append(reward)
            ep_reward += reward
            if done:
                break
        running_reward = 0.05 * ep_reward + 0.95 * running_reward
        reward_meter.update(ep_reward)
        loss = finish_episode(policy, optimizer, args.gamma, eps)
        if i_episode % args.log_interval == 0:
            log.info("Episode %d\tLast reward: %.2f\tAverage reward: %.2f\tloss %.3f",
                     i_episode, ep_reward, running_reward, loss)
            saver.save({"policy": policy.state_dict()}, running_reward, i_episode)
    log.info("eval return %.2f", evaluate(policy, env))
    saver.cleanup()


if __name__ == "__main__":
    main()
