import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


class ContentLoss(nn.Module):

    def __init__(self, target):
        super(ContentLoss, self).__init__()
        # the target content is a stated value, not a variable
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input


# stand-in for models.vgg19(pretrained=True).features (no downloads here)
cnn = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=False),
    nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=False),
)
content_layers = ["conv_2"]


def get_model_and_losses(cnn, content_img):
    content_losses = []
    model = nn.Sequential()
    i = 0
    for layer in cnn.children():
        if isinstance(layer, nn.Conv2d):
            i += 1
            name = "conv_{}".format(i)
        else:
            name = "relu_{}".format(i)
        model.add_module(name, layer)
        if name in content_layers:
            target = model(content_img)
            content_loss = ContentLoss(target)
            model.add_module("content_loss_{}".format(i), content_loss)
            content_losses.append(content_loss)
    return model, content_losses


def run_style_transfer(cnn, content_img, input_img, num_steps=2):
    model, content_losses = get_model_and_losses(cnn, content_img)
    optimizer = optim.LBFGS([input_img.requires_grad_()], max_iter=3)
    run = [0]
    while run[0] <= num_steps:

        def closure():
            input_img.data.clamp_(0, 1)
            optimizer.zero_grad()
            model(input_img)
            content_score = 0
            for cl in content_losses:
                content_score += cl.loss
            content_score.backward()
            run[0] += 1
            return content_score

        optimizer.step(closure)
    input_img.data.clamp_(0, 1)
    return input_img


content_img = torch.rand(1, 3, 16, 16)
input_img = content_img.clone() + 0.1 * torch.randn(1, 3, 16, 16)
output = run_style_transfer(cnn, content_img, input_img)
