import torch


class SlotMemory:
    def __init__(self, n_slots=6, dim=8):
        self.slots = torch.zeros(1, n_slots, dim)
        self.n = 0

    def write(self, values):
        k = values.shape[1]
        self.slots = torch.cat([self.slots[:, k:], values], dim=1)
        self.n = min(self.n + k, self.slots.shape[1])

    def truncate_history(self, keep_grad=2):
        """Stop gradients into all but the newest `keep_grad` slots."""
        self.slots[:, :-keep_grad].detach_()
