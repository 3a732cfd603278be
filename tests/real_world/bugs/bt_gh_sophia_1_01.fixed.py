import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GPT(nn.Module):
    def __init__(self, vocab_size=16, n_embd=8):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx, targets=None):
        logits = self.lm_head(self.ln_f(self.wte(idx)))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss


class SophiaG(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-4, rho=0.04):
        super().__init__(params, dict(lr=lr, rho=rho))

    @torch.no_grad()
    def update_hessian(self):
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                state = self.state[p]
                if 'hessian' not in state:
                    state['hessian'] = torch.zeros_like(p)
                state['hessian'].mul_(0.99).addcmul_(p.grad, p.grad, value=0.01)

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                h = self.state[p].get('hessian', torch.zeros_like(p))
                p.add_(-group['lr'] * (p.grad / (group['rho'] * h + 1e-15)).clamp(-1, 1))


def train(model, optimizer, get_batch, max_iters=4, hess_interval=2):
    for iter_num in range(max_iters):
        X, Y = get_batch()
        logits, loss = model(X, Y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

        if iter_num % hess_interval == hess_interval - 1:
            # update hessian EMA with a fresh forward pass
            logits, _ = model(X, None)
            samp_dist = torch.distributions.Categorical(logits=logits)
            y_sample = samp_dist.sample()
            loss_sampled = F.cross_entropy(logits.view(-1, logits.size(-1)), y_sample.view(-1), ignore_index=-1)
            loss_sampled.backward()
            optimizer.update_hessian()
            optimizer.zero_grad(set_to_none=True)


model = GPT()
optimizer = SophiaG(model.parameters())
train(model, optimizer, lambda: (torch.randint(0, 16, (2, 6)), torch.randint(0, 16, (2, 6))))
