import torch
import torch.nn as nn

torch.manual_seed(0)


class Args:
    epsilon = 0.3
    alpha = 0.01
    attack_iters = 3
    attack = 'pgd'


args = Args()
model = nn.Sequential(nn.Flatten(), nn.Linear(16, 10))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()

for X, y in [(torch.rand(4, 1, 4, 4), torch.randint(0, 10, (4,))) for _ in range(2)]:
    if args.attack == 'pgd':
        delta = torch.zeros_like(X).uniform_(-args.epsilon, args.epsilon)
        delta.data = torch.max(torch.min(1 - X, delta.data), 0 - X)
        for _ in range(args.attack_iters):
            delta.requires_grad = True
            output = model(X + delta)
            loss = criterion(output, y)
            opt.zero_grad()
            loss.backward()
            grad = delta.grad.detach()
            I = output.max(1)[1] == y
            delta.data[I] = torch.clamp(delta + args.alpha * torch.sign(grad), -args.epsilon, args.epsilon)[I]
            delta.data[I] = torch.max(torch.min(1 - X, delta.data), 0 - X)[I]
        delta = delta.detach()
    output = model(torch.clamp(X + delta, 0, 1))
    loss = criterion(output, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
