import torch
import torch.nn as nn


class CustomOp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x = x * 2.0
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2.0


def custom_op(x):
    return CustomOp.apply(x)


class Net(nn.Module):
    def __init__(self, in_channel, out_channel, scale=400.0):
        super().__init__()
        self.fc = nn.Linear(in_channel, out_channel)
        self.s = scale

    def forward(self, input):
        x = self.fc(input)
        logits = custom_op(x)
        logits *= self.s
        return logits


if __name__ == "__main__":
    torch.manual_seed(0)
    net = Net(128, 512)
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-3)
    for _ in range(2):
        dummy_x = torch.rand(32, 128)
        x = net(dummy_x)
        loss = x.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
