import torch

torch.manual_seed(0)


class BatchRandomGrayScale:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, imgs):
        indices = torch.rand(imgs.shape[0]) < self.p
        if indices.all():
            gray = (0.2989 * imgs[:, 0] + 0.587 * imgs[:, 1] + 0.114 * imgs[:, 2]).unsqueeze(1)
            return gray.expand(imgs.shape)
        return imgs


class Normalize:
    def __init__(self, mean, std, inplace=True):
        self.mean = torch.as_tensor(mean).view(-1, 1, 1)
        self.std = torch.as_tensor(std).view(-1, 1, 1)
        self.inplace = inplace

    def __call__(self, tensor):
        if not self.inplace:
            tensor = tensor.clone()
        tensor.sub_(self.mean).div_(self.std)
        return tensor


class BatchImageWrapper:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, imgs):
        for t in self.transforms:
            imgs = t(imgs).contiguous()
        return imgs


transform = BatchImageWrapper([
    BatchRandomGrayScale(1.0),
    Normalize(225, 225),
])
out = transform(torch.randn(4, 3, 8, 8))
