import torch
import torch.nn as nn

torch.manual_seed(0)


class Normalize:
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, tensor):
        mean = torch.tensor(self.mean).view(-1, 1, 1)
        std = torch.tensor(self.std).view(-1, 1, 1)
        return (tensor - mean) / std


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


norm_transform = Compose([Normalize([0.5] * 3, [0.5] * 3)])


def predict_with_model(preprocessed_image, model):
    resized_image = nn.functional.interpolate(preprocessed_image, size=(8, 8), mode="bilinear", align_corners=False)
    normalized_image = norm_transform(resized_image[0])
    logits = model(normalized_image.unsqueeze(0))
    return logits


def robust_fgsm(input_img, model, eps=0.05):
    input_var = input_img.clone().requires_grad_(True)
    logits = predict_with_model(input_var, model)
    loss = nn.functional.cross_entropy(logits, torch.tensor([0]))
    loss.backward()
    return (input_var + eps * input_var.grad.sign()).clamp(0, 1).detach()


model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten(), nn.Linear(4 * 6 * 6, 2))
perturbed = robust_fgsm(torch.rand(1, 3, 10, 10), model)
