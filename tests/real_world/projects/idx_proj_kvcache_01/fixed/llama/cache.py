import torch


class KVCache:
    def __init__(self, max_batch, max_seq, dim):
        self.shape = (max_batch, max_seq, dim)
        self.reset()

    def reset(self):
        self.cache_k = torch.zeros(self.shape)
        self.cache_v = torch.zeros(self.shape)

    def update(self, xk, xv, bsz, start_pos):
        seqlen = xk.shape[1]
        self.cache_k[:bsz, start_pos:start_pos + seqlen] = xk
        self.cache_v[:bsz, start_pos:start_pos + seqlen] = xv
        end = start_pos + seqlen
        return self.cache_k[:bsz, :end], self.cache_v[:bsz, :end]
