import torch
from torch import nn

torch.manual_seed(0)


class Speaker(nn.Module):
    def __init__(self, vocab=16, dim=8):
        super().__init__()
        self.codes = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, 1)

    @torch.inference_mode()
    def make_prompt(self, audio):
        return {"codes": (audio.abs() * 10).long().clamp(max=15)}


class Trainer:
    def __init__(self, model):
        self.model = model
        self.prompts = {}
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def prompt(self, audio, key="speaker"):
        if key not in self.prompts:
            self.prompts[key] = self.model.make_prompt(audio)
        return self.prompts[key]

    def step(self, audio):
        codes = self.prompt(audio)["codes"].clone()  # a normal tensor outside inference mode
        loss = self.model.head(self.model.codes(codes)).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


Trainer(Speaker()).step(torch.randn(3))
