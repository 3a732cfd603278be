import torch

from policy import TinyPolicy
from rlhf.losses import kl_penalised_loss
from rlhf.reference import ReferencePolicy


def run():
    torch.manual_seed(0)
    policy = TinyPolicy()
    ref = ReferencePolicy(policy)
    opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
    for it in range(3):
        ids = torch.randint(0, 20, (4, 6))
        actions = torch.randint(0, 20, (4, 6))
        rewards = torch.randn(4)
        loss = kl_penalised_loss(policy(ids), ref.probs(ids), actions, rewards)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(it, loss.item())


if __name__ == "__main__":
    run()
