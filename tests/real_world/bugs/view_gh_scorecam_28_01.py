import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def denormalize(tensor):
    means = [0.485, 0.456, 0.406]
    stds = [0.229, 0.224, 0.225]
    denormalized = tensor.clone()
    for channel, mean, std in zip(denormalized[0], means, stds):
        channel.mul_(std).add_(mean)
    return denormalized


def format_for_plotting(tensor):
    if tensor.dim() == 4:
        tensor = tensor.squeeze(0)
    return tensor.permute(1, 2, 0)


def basic_visualize(input_, gradients):
    input_ = format_for_plotting(denormalize(input_))
    return input_ * gradients.unsqueeze(-1)


model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5))
input_ = torch.randn(1, 3, 8, 8, requires_grad=True)
score = model(input_)[0].max()
score.backward(retain_graph=True)
saliency = F.relu(input_.grad.abs().sum(1))[0]
vis = basic_visualize(input_, saliency)
vis.sum().backward()
