from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyActor(nn.Module):
    def __init__(self, vocab=20, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab)

    def forward_actor(self, completion, num_actions):
        logits = self.head(self.emb(completion[:, :-1]))
        log_probs = F.log_softmax(logits, dim=-1).gather(-1, completion[:, 1:, None]).squeeze(-1)
        return log_probs[:, -num_actions:]


@dataclass
class Experience:
    completion: torch.Tensor
    num_actions: int
    actor_log_probs: torch.Tensor
    advantage: torch.Tensor


class PPOTrainer:
    def __init__(self, actor, epochs=2, clip=0.2):
        self.actor, self.epochs, self.clip = actor, epochs, clip
        self.optimizer = torch.optim.Adam(actor.parameters(), lr=1e-4)

    @torch.no_grad()
    def make_experience(self, prompts):
        completion = torch.cat([prompts, torch.randint(0, 20, (prompts.size(0), 4))], dim=1)
        num_actions = 4
        actor_log_probs = self.actor.forward_actor(completion, num_actions)
        reward = torch.randn(prompts.size(0), 1)
        return Experience(completion, num_actions, actor_log_probs, reward.expand(-1, num_actions))

    def actor_criterion(self, curr, old, advantage):
        ratio = (curr - old).exp()
        surr1 = ratio * advantage
        surr2 = ratio.clamp(1 - self.clip, 1 + self.clip) * advantage
        return -torch.min(surr1, surr2).mean()

    def fit(self, prompts):
        experience = self.make_experience(prompts)
        for epoch in range(self.epochs):
            curr = self.actor.forward_actor(experience.completion, experience.num_actions)
            loss = self.actor_criterion(curr, experience.actor_log_probs, experience.advantage)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


PPOTrainer(TinyActor()).fit(torch.randint(0, 20, (3, 5)))
