import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim

torch.manual_seed(0)


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class Lambda:
    def __init__(self, lambd):
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)


class Normalize:
    def __init__(self, mean, std):
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def __call__(self, tensor):
        return (tensor - self.mean) / self.std


def gram_matrix(x):
    b, c, h, w = x.shape
    f = x.view(b, c, h * w)
    return f @ f.transpose(1, 2) / (c * h * w)


postprocess = Compose([
    Lambda(lambda x: x.mul_(1. / 255)),
    Normalize(mean=[-0.485 / 0.229, -0.456 / 0.224, -0.406 / 0.225], std=[1 / 0.229, 1 / 0.224, 1 / 0.225]),
])

vgg = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1))
content, style = torch.rand(1, 3, 8, 8), torch.rand(1, 3, 8, 8)
opt_img = content.clone().requires_grad_(True)
optimizer = optim.LBFGS([opt_img])
style_target = gram_matrix(vgg(style)).detach()
content_target = vgg(content).detach()


def closure():
    optimizer.zero_grad()
    out = vgg(opt_img)
    loss = F.mse_loss(out, content_target) + 1e3 * F.mse_loss(gram_matrix(out), style_target)
    loss.backward()
    return loss


for _ in range(2):
    optimizer.step(closure)

out_img = postprocess(opt_img[0]).permute(1, 2, 0)
print(out_img.shape)
