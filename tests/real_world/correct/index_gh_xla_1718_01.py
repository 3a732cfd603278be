import torch
import torch.nn as nn


def run_test(device):
    torch.manual_seed(0)
    linear = nn.Linear(16, 32).to(device=device)
    batch = torch.rand(4, 16).to(device=device)
    x = linear(batch)
    x[:, :24] = 0
    loss = x.sum()
    loss.backward()
    print('\tloss', loss)
    print('\tgnorm', linear.weight.grad.norm())


if __name__ == "__main__":
    print('CPU:')
    run_test('cpu')
