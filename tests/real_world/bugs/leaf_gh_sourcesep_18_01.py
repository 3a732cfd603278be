import torch

torch.manual_seed(0)


def learn_mask(mix_spec, source_spec, steps=5, learning_rate=0.5):
    mask = torch.full_like(mix_spec, 0.5, requires_grad=True)
    for step in range(steps):
        estimate = torch.sigmoid(8 * (mask - 0.5)) * mix_spec
        loss = torch.mean((estimate - source_spec) ** 2)
        loss.backward()
        mask -= learning_rate * mask.grad
        mask.grad.zero_()
    return mask.detach()


mix = torch.rand(16, 10)
source = mix * (torch.rand(16, 10) > 0.5).float()
learn_mask(mix, source)
