import torch
import torch.nn.functional as F

from model import TinyLM
from rewards import count_reward, group_advantages
from rollout import sample_group


def grpo_step(model, opt, prompt):
    outputs = sample_group(model, prompt)
    completions = outputs[:, prompt.shape[1]:]
    adv = group_advantages(count_reward(completions))
    logits = model(outputs)[:, prompt.shape[1] - 1:-1]
    logps = F.log_softmax(logits, dim=-1).gather(2, completions.unsqueeze(-1)).squeeze(-1)
    loss = -(torch.exp(logps - logps.detach()) * adv[:, None]).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


torch.manual_seed(0)
policy = TinyLM()
opt = torch.optim.AdamW(policy.parameters(), lr=1e-3)
prompt = torch.tensor([[1, 2, 3]])
for step in range(3):
    print(step, grpo_step(policy, opt, prompt))
