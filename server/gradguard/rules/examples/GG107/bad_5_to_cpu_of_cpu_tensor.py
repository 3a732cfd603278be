import torch
from torch import nn

torch.manual_seed(0)
net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.InstanceNorm2d(4), nn.LeakyReLU(0.01))


@torch.inference_mode()
def predict(image):
    return net(image[None])[0]


image = torch.rand(1, 8, 8)
prediction = predict(image).to("cpu")  # already on the CPU: torch returns the inference tensor itself
prediction += predict(image.flip(-1)).flip(-1).to("cpu")  # <- GG107
