import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Normalize:
    def __init__(self, mean, std):
        self.mean, self.std = mean, std

    def __call__(self, tensor):
        mean = torch.tensor(self.mean).view(-1, 1, 1)
        std = torch.tensor(self.std).view(-1, 1, 1)
        return (tensor - mean) / std


norm_transform = Normalize([0.5, 0.5, 0.5], [0.5, 0.5, 0.5])


def predict_with_model(image, model):
    resized_image = F.interpolate(image.unsqueeze(0), size=(16, 16), mode="bilinear", align_corners=False)[0]
    normalized_image = norm_transform(resized_image)
    logits = model(normalized_image.unsqueeze(0))
    return logits.argmax(1), logits


def robust_fgsm(input_img, model, eps=0.05, steps=3):
    perturbed = input_img.clone()
    for _ in range(steps):
        perturbed.requires_grad_(True)
        _, logits = predict_with_model(perturbed, model)
        loss = F.cross_entropy(logits, torch.tensor([0]))
        loss.backward()
        with torch.no_grad():
            perturbed = (perturbed - eps * perturbed.grad.sign()).clamp(0, 1)
    return perturbed


model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2))
robust_fgsm(torch.rand(3, 20, 20), model)
