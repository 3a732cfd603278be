import torch

from learners import PPOLearner

torch.manual_seed(0)
learner = PPOLearner()
T = 20
batch = {
    "obs": torch.randn(T, 8),
    "actions": torch.randint(0, 4, (T,)),
    "old_logp": torch.full((T,), -1.386),
    "rewards": torch.randn(T),
}
batch["returns"] = batch["rewards"].flip(0).cumsum(0).flip(0)
for update in range(2):
    print(update, learner.train(batch))
