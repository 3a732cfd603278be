import torch


class SparseDispatcher:
    def __init__(self, num_experts, gates):
        self._gates = gates
        self._num_experts = num_experts
        self.expert_rows = [torch.nonzero(gates[:, e] > 0).squeeze(1) for e in range(num_experts)]

    def dispatch(self, inp):
        return [inp[rows] for rows in self.expert_rows]

    def combine(self, expert_out):
        out = torch.zeros(self._gates.shape[0], expert_out[0].shape[1])
        for e, rows in enumerate(self.expert_rows):
            weighted = expert_out[e] * self._gates[rows, e][:, None]
            out = out.index_add(0, rows, weighted)
        return out
