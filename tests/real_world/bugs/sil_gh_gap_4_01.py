import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)

mean_arr = [0.485, 0.456, 0.406]
stddev_arr = [0.229, 0.224, 0.225]
mag_in = 10.0


class Opt:
    batchSize = 2
    testBatchSize = 2


opt = Opt()


class ResnetGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 3, 3, padding=1), nn.Tanh())

    def forward(self, x):
        return self.model(x)


def normalize_and_scale(delta_im, mode='train'):
    delta_im = delta_im + 1  # now 0..2
    delta_im = delta_im * 0.5  # now 0..1

    # normalize image color channels
    for c in range(3):
        delta_im.data[:, c, :, :] = (delta_im.data[:, c, :, :] - mean_arr[c]) / stddev_arr[c]

    # threshold each channel of each image in deltaIm according to inf norm
    # do on a per image basis as the inf norm of each image could be different
    bs = opt.batchSize if (mode == 'train') else opt.testBatchSize
    for i in range(bs):
        # do per channel l_inf normalization
        for ci in range(3):
            l_inf_channel = delta_im[i, ci, :, :].detach().abs().max()
            mag_in_scaled_c = mag_in / (255.0 * stddev_arr[ci])
            delta_im[i, ci, :, :] = delta_im[i, ci, :, :].clone() * np.minimum(1.0, mag_in_scaled_c / l_inf_channel.cpu().numpy())
    return delta_im


def normalize_and_scale_reference(delta_im):
    """The same computation written out of place, so autograd sees every step."""
    delta_im = (delta_im + 1) * 0.5
    mean = torch.tensor(mean_arr).view(1, 3, 1, 1)
    std = torch.tensor(stddev_arr).view(1, 3, 1, 1)
    delta_im = (delta_im - mean) / std
    l_inf = delta_im.detach().abs().amax(dim=(2, 3), keepdim=True)
    mag = (mag_in / (255.0 * std))
    return delta_im * torch.clamp(mag / l_inf, max=1.0)


netG = ResnetGenerator()
criterion_pre = nn.CrossEntropyLoss()
classifier = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 5))
image = torch.rand(opt.batchSize, 3, 8, 8)
noise = torch.rand(opt.batchSize, 3, 8, 8)
target = torch.randint(0, 5, (opt.batchSize,))

delta_im = netG(noise)
delta_im = normalize_and_scale(delta_im, 'train')
recons = torch.clamp(image + delta_im, -3, 3)
loss = torch.log(criterion_pre(classifier(recons), target))
grads = torch.autograd.grad(loss, list(netG.parameters()))

ref = normalize_and_scale_reference(netG(noise))
ref_loss = torch.log(criterion_pre(classifier(torch.clamp(image + ref, -3, 3)), target))
ref_grads = torch.autograd.grad(ref_loss, list(netG.parameters()))
if not torch.allclose(ref_loss, loss.detach(), atol=1e-6):
    print("forward values differ")
if not all(torch.allclose(g, r, rtol=1e-4, atol=1e-7) for g, r in zip(grads, ref_grads)):
    print("wrong gradient: generator gradient misses the channel normalisation written through .data")
else:
    print("gradient ok")
