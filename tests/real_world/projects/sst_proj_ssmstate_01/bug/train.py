import torch

from ssm import DiagonalSSM


def main():
    torch.manual_seed(0)
    layer = DiagonalSSM()
    opt = torch.optim.Adam(layer.parameters(), lr=1e-2)
    x = torch.randn(2, 6, 4)
    target = torch.roll(x, 1, dims=1)
    for step in range(3):
        y = layer(x)
        loss = ((y - target) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, loss.item())


main()
