import torch

from tasks.encoder import shared_encoder
from tasks.heads import DepthHead, SegHead


class MultiTaskTrainer:
    def __init__(self):
        self.encoder, self.seg, self.depth = shared_encoder(), SegHead(), DepthHead()
        params = [*self.encoder.parameters(), *self.seg.parameters(), *self.depth.parameters()]
        self.opt = torch.optim.SGD(params, lr=0.05)

    def step(self, x, seg_t, depth_t):
        feats = self.encoder(x)
        self.opt.zero_grad()
        loss = self.seg.loss(feats, seg_t) + self.depth.loss(feats, depth_t)
        loss.backward()
        self.opt.step()
