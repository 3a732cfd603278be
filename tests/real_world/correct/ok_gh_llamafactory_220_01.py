"""RLOO (REINFORCE leave-one-out) fine-tuning of a toy causal LM against a frozen reward model.

For each prompt, k completions are sampled; each one's advantage is its reward minus the mean reward
of the other k-1. Generation and scoring run without autograd; the policy loss is -A * log p(y|x).
"""
import argparse
import copy
import logging
import os
import random
import shutil
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger("rloo")

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


class ToyLM(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, ids):
        h, _ = self.rnn(self.embed(ids))
        return self.lm_head(h)

    @torch.no_grad()
    def generate(self, prompt, steps, temperature=1.0):
        ids = prompt
        for _ in range(steps):
            logits = self(ids)[:, -1] / temperature
            nxt = torch.multinomial(F.softmax(logits, -1), 1)
            ids = torch.cat([ids, nxt], dim=1)
        return ids


class RewardModel(nn.Module):
    """Frozen scorer: likes completions that contain many copies of a target token."""

    def __init__(self, vocab, dim, target):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.score = nn.Linear(dim, 1)
        self.target = target

    def forward(self, ids):
        bonus = (ids == self.target).float().mean(1)
        return self.score(self.embed(ids).mean(1)).squeeze(-1) * 0.1 + bonus


def sequence_logprobs(model, ids, prompt_len):
    logits = model(ids[:, :-1])
    logps = torch.log_softmax(logits, -1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    return logps[:, prompt_len - 1:].sum(-1)


def rloo_advantages(rewards, k):
    r = rewards.view(-1, k)
    baseline = (r.sum(1, keepdim=True) - r) / (k - 1)
    return (r - baseline).view(-1)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--vocab", type=int, default=16)
    p.add_argument("--dim", type=int, default=16)
    p.add_argument("--prompts", type=int, default=4)
    p.add_argument("--prompt-len", type=int, default=3)
    p.add_argument("--gen-len", type=int, default=6)
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--kl-coef", type=float, default=0.05)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--target-token", type=int, default=7)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args([])

    setup_logging()
    seed_everything(args.seed)
    policy = ToyLM(args.vocab, args.dim)
    ref_policy = copy.deepcopy(policy).eval()
    reward_model = RewardModel(args.vocab, args.dim, args.target_token).eval()
    for m in (ref_policy, reward_model):
        for prm in m.parameters():
            prm.requires_grad_(False)
    opt = torch.optim.Adam(policy.parameters(), lr=args.lr)
    saver = CheckpointSaver(keep=1)
    reward_meter, loss_meter = AverageMeter("reward"), AverageMeter("loss")
    for step in range(args.steps):
        with Timer() as t:
            prompts = torch.randint(0, args.vocab, (args.prompts, args.prompt_len)).repeat_interleave(args.k, 0)
            samples = policy.generate(prompts, args.gen_len)
            # scoring needs no autograd: run it in inference mode (faster than no_grad)
            with torch.inference_mode():
                rewards = reward_model(samples)
                ref_logps = sequence_logprobs(ref_policy, samples, args.prompt_len)
            advantages = rloo_advantages(rewards, args.k)
            logps = sequence_logprobs(policy, samples, args.prompt_len)
            kl = logps - ref_logps
            loss = -(advantages * logps).mean() + args.kl_coef * kl.mean()
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            opt.step()
        reward_meter.update(rewards.mean().item())
        loss_meter.update(loss.item())
        logger.info("step %d %s %s kl %.4f (%.2fs)", step, reward_meter, loss_meter, kl.mean().item(), t.elapsed)
    saver.save(policy.state_dict(), reward_meter.avg, args.steps)
    saver.cleanup()


if __name__ == "__main__":
    main()
