from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Actor(nn.Module):
    def __init__(self, vocab=20, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, sequences, num_actions):
        log_probs = F.log_softmax(self.head(self.emb(sequences[:, :-1])), -1)
        return log_probs.gather(-1, sequences[:, 1:, None]).squeeze(-1)[:, -num_actions:]


@dataclass
class Experience:
    sequences: torch.Tensor
    action_log_probs: torch.Tensor
    advantages: torch.Tensor
    num_actions: int


class PPOTrainer:
    def __init__(self, actor, max_epochs=2, eps_clip=0.2):
        self.actor, self.max_epochs, self.eps_clip = actor, max_epochs, eps_clip
        self.actor_optim = torch.optim.Adam(actor.parameters(), lr=1e-4)
        self.replay_buffer = []

    def make_experience(self, prompts):
        sequences = torch.cat([prompts, torch.randint(0, 20, (prompts.size(0), 3))], 1)
        num_actions = 3
        action_log_probs = self.actor(sequences, num_actions)
        advantages = torch.randn(prompts.size(0), num_actions)
        return Experience(sequences, action_log_probs, advantages, num_actions)

    def strategy_backward(self, loss):
        self.actor_optim.zero_grad()
        loss.backward()
        self.actor_optim.step()

    def training_step_actor(self, experience):
        action_log_probs = self.actor(experience.sequences, experience.num_actions)
        old_action_log_probs = experience.action_log_probs
        ratio = (action_log_probs - old_action_log_probs).exp()
        surr1 = ratio * experience.advantages
        surr2 = ratio.clamp(1 - self.eps_clip, 1 + self.eps_clip) * experience.advantages
        actor_loss = -torch.min(surr1, surr2).mean()
        self.strategy_backward(actor_loss)

    def fit(self, prompt_batches):
        for prompts in prompt_batches:
            self.replay_buffer.append(self.make_experience(prompts))
        for epoch in range(self.max_epochs):
            for experience in self.replay_buffer:
                self.training_step_actor(experience)
        self.replay_buffer.clear()


PPOTrainer(Actor()).fit([torch.randint(0, 20, (2, 4)) for _ in range(2)])
