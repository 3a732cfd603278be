import torch


class LinearSchedule:
    def __init__(self, steps=50):
        betas = torch.linspace(1e-4, 0.02, steps)
        self.alpha_bar = torch.cumprod(1 - betas, dim=0)
        self.steps = steps

    def q_sample(self, x0, t, noise):
        ab = self.alpha_bar[t][:, None]
        return ab.sqrt() * x0 + (1 - ab).sqrt() * noise
