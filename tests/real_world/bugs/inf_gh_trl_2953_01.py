import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyLM(nn.Module):
    def __init__(self, vocab=12, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids):
        return self.lm_head(torch.tanh(self.embed(input_ids)))

    def generate(self, prompt_ids, max_new_tokens=3):
        ids = prompt_ids
        for _ in range(max_new_tokens):
            next_id = self(ids)[:, -1].argmax(-1, keepdim=True)
            ids = torch.cat([ids, next_id], dim=1)
        return ids[:, prompt_ids.size(1):]


class GRPOTrainer:
    def __init__(self, model, num_iterations=2, beta=0.0, lr=1e-2):
        self.model = model
        self.num_iterations = num_iterations
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)

    def _get_per_token_logps(self, model, input_ids, logits_to_keep):
        logits = model(input_ids)[:, -logits_to_keep - 1:-1]
        logps = F.log_softmax(logits, dim=-1)
        return logps.gather(-1, input_ids[:, -logits_to_keep:].unsqueeze(-1)).squeeze(-1)

    def _prepare_inputs(self, prompt_ids, reward_fn):
        with torch.inference_mode():
            completion_ids = self.model.generate(prompt_ids)
            prompt_completion_ids = torch.cat([prompt_ids, completion_ids], dim=1)
            logits_to_keep = completion_ids.size(1)
            old_per_token_logps = self._get_per_token_logps(self.model, prompt_completion_ids, logits_to_keep)
        rewards = reward_fn(completion_ids)
        advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-4)
        return {"prompt_completion_ids": prompt_completion_ids, "logits_to_keep": logits_to_keep,
                "old_per_token_logps": old_per_token_logps, "advantages": advantages}

    def compute_loss(self, model, inputs):
        per_token_logps = self._get_per_token_logps(model, inputs["prompt_completion_ids"], inputs["logits_to_keep"])
        coef = torch.exp(per_token_logps - inputs["old_per_token_logps"])
        per_token_loss = -coef * inputs["advantages"].unsqueeze(1)
        return per_token_loss.mean()

    def train(self, prompts, reward_fn):
        inputs = self._prepare_inputs(prompts, reward_fn)
        for _ in range(self.num_iterations):
            loss = self.compute_loss(self.model, inputs)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


trainer = GRPOTrainer(TinyLM())
trainer.train(torch.randint(0, 12, (4, 3)), lambda ids: (ids == 3).float().sum(1))
