import torch


class FrozenTeacher:
    def __init__(self, model):
        self.model = model.eval()

    def soft_targets(self, x, temperature):
        with torch.inference_mode():
            return torch.softmax(self.model(x) / temperature, dim=-1)
