import torch

from dpo import dpo_loss
from model import TinyLM
from reference import FrozenReference

torch.manual_seed(0)
policy = TinyLM()
ref = FrozenReference(policy)
opt = torch.optim.AdamW(policy.parameters(), lr=1e-3)
chosen = torch.randint(0, 24, (4, 8))
rejected = torch.randint(0, 24, (4, 8))
ref_chosen, ref_rejected = ref.logps(chosen, rejected)
for step in range(3):
    loss = dpo_loss(policy, ref_chosen, ref_rejected, chosen, rejected)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
