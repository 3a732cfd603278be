import torch


class LineWorld:
    def __init__(self, seed=0):
        self.g = torch.Generator().manual_seed(seed)

    def reset(self):
        self.pos, self.t = 0.0, 0
        return self.obs()

    def obs(self):
        return torch.tensor([self.pos, 1.0, self.t / 10, 0.0])

    def step(self, action):
        self.pos += 1.0 if action == 1 else -1.0
        self.t += 1
        return self.obs(), float(action == 1), self.t >= 6
