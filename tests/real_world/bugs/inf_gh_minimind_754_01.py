import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MiniMind(nn.Module):
    def __init__(self, vocab=16, dim=8):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, input_ids, attention_mask=None):
        h = self.tok(input_ids)
        if attention_mask is not None:
            h = h * attention_mask.unsqueeze(-1)
        return self.out(h)

    @torch.inference_mode()
    def generate(self, input_ids, max_new_tokens=3):
        for _ in range(max_new_tokens):
            probs = F.softmax(self(input_ids)[:, -1], dim=-1)
            input_ids = torch.cat([input_ids, torch.multinomial(probs, 1)], dim=1)
        return input_ids


def train_epoch(model, optimizer, prompts, ref_logps_fn, steps=2):
    for step in range(steps):
        outputs = model.generate(prompts)
        full_mask = torch.ones_like(outputs, dtype=torch.float)
        logp_pos = torch.arange(prompts.size(1) - 1, outputs.size(1) - 1).expand(outputs.size(0), -1)
        res = model(outputs, attention_mask=full_mask)
        per_token_logps = F.log_softmax(res[:, :-1, :], dim=-1).gather(2, outputs[:, 1:].unsqueeze(-1)).squeeze(-1).gather(1, logp_pos)
        rewards = (outputs[:, prompts.size(1):] % 2 == 0).float().mean(1)
        advantages = rewards - rewards.mean()
        loss = -(per_token_logps * advantages.unsqueeze(1)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


model = MiniMind()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
train_epoch(model, optimizer, torch.randint(0, 16, (3, 4)), None)
