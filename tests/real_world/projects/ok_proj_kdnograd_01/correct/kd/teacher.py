import torch


class Teacher:
    def __init__(self, model):
        self.model = model.eval()

    @torch.no_grad()
    def soft_targets(self, x, t):
        return torch.softmax(self.model(x) / t, dim=-1)
