import torch
import torch.nn as nn
from torch.distributions import uniform

torch.manual_seed(0)


class BatchNorm(nn.Module):
    def __init__(self, input, mode, momentum=0.9, epsilon=1e-05):
        '''
        input: assume 4D input (mini_batch_size, # channel, w, h)
        momentum: momentum for exponential average
        '''
        super(BatchNorm, self).__init__()
        self.momentum = momentum
        self.run_mode = 0  # 0: training, 1: testing
        self.insize = input
        self.epsilon = epsilon

        # initialize weight(gamma), bias(beta), running mean and variance
        U = uniform.Uniform(torch.tensor([0.0]), torch.tensor([1.0]))
        self.weight = nn.Parameter(U.sample(torch.Size([self.insize])).view(self.insize))
        self.bias = nn.Parameter(torch.zeros(self.insize))
        self.register_buffer('running_mean', torch.zeros(self.insize))  # this solves cpu and cuda mismatch location issue
        self.register_buffer('running_var', torch.ones(self.insize))

    def forward(self, input, mode):
        if mode == 0:
            mean = input.mean([0, 2, 3])  # along channel axis
            var = input.var([0, 2, 3])
            self.running_mean = (self.momentum * self.running_mean) + (1.0 - self.momentum) * mean  # .to(input.device)
            self.running_var = (self.momentum * self.running_var) + (1.0 - self.momentum) * (input.shape[0] / (input.shape[0] - 1) * var)

            mean = self.running_mean
            var = self.running_var
        else:
            mean = self.running_mean
            var = self.running_var

        # change shape
        current_mean = mean.view([1, self.insize, 1, 1]).expand_as(input)
        current_var = var.view([1, self.insize, 1, 1]).expand_as(input)
        current_weight = self.weight.view([1, self.insize, 1, 1]).expand_as(input)
        current_bias = self.bias.view([1, self.insize, 1, 1]).expand_as(input)

        # get output
        y = current_weight * (input - current_mean) / (current_var + self.epsilon).sqrt() + current_bias
        return y


conv = nn.Conv2d(3, 4, 3, padding=1)
bn = BatchNorm(4, 0)
optimizer = torch.optim.SGD(list(conv.parameters()) + list(bn.parameters()), lr=0.01)

for step in range(3):
    images = torch.randn(4, 3, 8, 8)
    out = bn(conv(images), 0)
    loss = out.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
