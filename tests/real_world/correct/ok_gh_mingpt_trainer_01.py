import time
from collections import defaultdict

import torch
import torch.nn as nn
from torch.nn import functional as F

torch.manual_seed(0)


class CfgNode:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


class Trainer:

    @staticmethod
    def get_default_config():
        C = CfgNode(device='auto', num_workers=4, max_iters=3, batch_size=2, learning_rate=3e-4,
                    betas=(0.9, 0.95), weight_decay=0.1, grad_norm_clip=1.0)
        return C

    def __init__(self, config, model, train_dataset):
        self.config = config
        self.model = model
        self.optimizer = None
        self.train_dataset = train_dataset
        self.callbacks = defaultdict(list)
        self.device = 'cpu'
        self.iter_num = 0
        self.iter_time = 0.0
        self.iter_dt = 0.0

    def add_callback(self, onevent: str, callback):
        self.callbacks[onevent].append(callback)

    def trigger_callbacks(self, onevent: str):
        for callback in self.callbacks.get(onevent, []):
            callback(self)

    def run(self):
        model, config = self.model, self.config

        # setup the optimizer
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, betas=config.betas)

        model.train()
        self.iter_num = 0
        self.iter_time = time.time()
        data_iter = iter(self.train_dataset)
        while True:
            batch = next(data_iter)
            x, y = batch

            # forward the model
            logits, self.loss = model(x, y)

            # backprop and update the parameters
            model.zero_grad(set_to_none=True)
            self.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_norm_clip)
            self.optimizer.step()

            self.trigger_callbacks('on_batch_end')
            self.iter_num += 1
            tnow = time.time()
            self.iter_dt = tnow - self.iter_time
            self.iter_time = tnow

            # termination conditions
            if config.max_iters is not None and self.iter_num >= config.max_iters:
                break


class GPT(nn.Module):
    def __init__(self, vocab_size=10, n_embd=8):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size)

    def forward(self, idx, targets=None):
        logits = self.lm_head(torch.tanh(self.wte(idx)))
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss


def batch_end_callback(trainer):
    if trainer.iter_num % 100 == 0:
        print(f"iter_dt {trainer.iter_dt * 1000:.2f}ms; iter {trainer.iter_num}: train loss {trainer.loss.item():.5f}")


dataset = [(torch.randint(0, 10, (2, 5)), torch.randint(0, 10, (2, 5))) for _ in range(3)]
trainer = Trainer(Trainer.get_default_config(), GPT(), dataset)
trainer.add_callback('on_batch_end', batch_end_callback)
trainer.run()
