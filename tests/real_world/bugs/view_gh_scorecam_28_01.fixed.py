import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def denormalize(tensor, means=(0.485, 0.456, 0.406), stds=(0.229, 0.224, 0.225)):
    denormalized = tensor.clone()
    for count, (mean, std) in enumerate(zip(means, stds)):
        denormalized[0][count] = denormalized[0][count].mul(std).add(mean)
    return denormalized


def saliency(model, input_, class_idx):
    input_ = input_.clone().requires_grad_(True)
    score = model(input_)[0, class_idx]
    grad, = torch.autograd.grad(score, input_, create_graph=True)
    return input_, grad.abs().amax(1, keepdim=True)


model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.Tanh(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(1, 3, 8, 8)
input_, sal = saliency(model, x, class_idx=1)
blend = denormalize(input_) * sal
tv = (blend[..., 1:, :] - blend[..., :-1, :]).abs().mean()
opt.zero_grad()
tv.backward()
opt.step()
