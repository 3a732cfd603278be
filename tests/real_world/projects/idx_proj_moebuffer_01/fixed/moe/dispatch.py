import torch


class TokenDispatcher:
    """Scatters tokens into one fixed-capacity buffer per expert, allocated once."""

    def __init__(self, n_experts, capacity, dim):
        self.buffer = torch.zeros(n_experts, capacity, dim)
        self.capacity = capacity

    def dispatch(self, x, expert_idx):
        self.buffer = torch.zeros_like(self.buffer)
        slots = []
        for e in range(self.buffer.shape[0]):
            rows = (expert_idx == e).nonzero(as_tuple=True)[0][: self.capacity]
            self.buffer[e, : len(rows)] = x[rows]
            slots.append(rows)
        return self.buffer, slots
