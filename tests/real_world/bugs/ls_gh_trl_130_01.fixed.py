"""PPO on a toy bandit-with-state environment (CartPole-like dynamics, no gym needed).

Collect a rollout, compute GAE advantages, then run several epochs of clipped-PPO
minibatch updates.
"""
import argparse
import logging
import os
import random
import shutil
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

logger = logging.getLogger("ppo")

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


# ----------------------------------------------------------------------------- environment
class ToyCartPole:
    """Linearised cart-pole: 4-d state, 2 actions, episode ends when |angle| grows too large."""

    def __init__(self, seed=0, max_steps=40):
        self.g = torch.Generator().manual_seed(seed)
        self.max_steps = max_steps

    def reset(self):
        self.t = 0
        self.state = (torch.rand(4, generator=self.g) - 0.5) * 0.1
        return self.state.clone()

    def step(self, action):
        force = 1.0 if action == 1 else -1.0
        x, v, th, w = self.state.tolist()
        w = w + 0.05 * (9.8 * th - force)
        th = th + 0.05 * w
        v = v + 0.05 * force
        x = x + 0.05 * v
        self.state = torch.tensor([x, v, th, w])
        self.t += 1
        done = abs(th) > 0.4 or abs(x) > 2.4 or self.t >= self.max_steps
        return self.state.clone(), 1.0, done


# ----------------------------------------------------------------------------- model
class ActorCritic(nn.Module):
    def __init__(self, obs_dim=4, n_actions=2, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return Categorical(logits=self.pi(h)), self.v(h).squeeze(-1)


def compute_gae(rewards, values, dones, gamma, lam):
    adv = torch.zeros_like(rewards)
    last = 0.0
    for t in reversed(range(len(rewards))):
        next_value = values[t + 1] if t + 1 < len(values) else 0.0
        nonterminal = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_value * nonterminal - values[t]
        last = delta + gamma * lam * nonterminal * last
        adv[t] = last
    return adv


def collect_rollout(env, model, steps):
    obs_list, act_list, logp_list, val_list, rew_list, done_list = [], [], [], [], [], []
    obs = env.reset()
    episode_returns, ep_ret = [], 0.0
    for _ in range(steps):
        dist, value = model(obs)
        action = dist.sample()
        logp = dist.log_prob(action).detach()
        next_obs, reward, done = env.step(action.item())
        obs_list.append(obs)
        act_list.append(action)
        logp_list.append(logp)
        val_list.append(value.detach())
        rew_list.append(reward)
        done_list.append(float(done))
        ep_ret += reward
        obs = next_obs
        if done:
            episode_returns.append(ep_ret)
            ep_ret, obs = 0.0, env.reset()
    batch = {
        "obs": torch.stack(obs_list), "actions": torch.stack(act_list), "logp": torch.stack(logp_list),
        "values": torch.stack(val_list), "rewards": torch.tensor(rew_list), "dones": torch.tensor(done_list),
    }
    return batch, episode_returns


def ppo_update(model, optimizer, batch, args):
    adv = compute_gae(batch["rewards"], batch["values"], batch["dones"], args.gamma, args.lam)
    returns = adv + batch["values"]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    n = len(batch["obs"])
    meters = [AverageMeter("policy"), AverageMeter("value"), AverageMeter("entropy")]
    for _ in range(args.update_epochs):
        perm = torch.randperm(n)
        for start in range(0, n, args.minibatch_size):
            idx = perm[start:start + args.minibatch_size]
            dist, value = model(batch["obs"][idx])
            new_logp = dist.log_prob(batch["actions"][idx])
            ratio = torch.exp(new_logp - batch["logp"][idx])
            surr1 = ratio * adv[idx]
            surr2 = torch.clamp(ratio, 1 - args.clip, 1 + args.clip) * adv[idx]
            policy_loss = -torch.min(surr1, surr2).mean()
            value_loss = F.mse_loss(value, returns[idx])
            entropy = dist.entropy().mean()
            loss = policy_loss + args.vf_coef * value_loss - args.ent_coef * entropy
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
            for m, v in zip(meters, (policy_loss, value_loss, entropy)):
                m.update(v.item(), len(idx))
    return meters


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--iterations", type=int, default=2)
    p.add_argument("--rollout-steps", type=int, default=64)
    p.add_argument("--update-epochs", type=int, default=2)
    p.add_argument("--minibatch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--lam", type=float, default=0.95)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=1)
    return p.parse_args([])


def main():
    args = parse_args()
    setup_logging()
    seed_everything(args.seed)
    env = ToyCartPole(seed=args.seed)
    model = ActorCritic()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, eps=1e-5)
    saver = CheckpointSaver(keep=1)
    for it in range(args.iterations):
        with Timer() as t:
            batch, returns = collect_rollout(env, model, args.rollout_steps)
            meters = ppo_update(model, optimizer, batch, args)
        mean_ret = sum(returns) / max(len(returns), 1)
        logger.info("iter %d  return %.1f  %s  (%.2fs)", it, mean_ret, "  ".join(map(str, meters)), t.elapsed)
        saver.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, mean_ret, it)
    saver.cleanup()


if __name__ == "__main__":
    main()
