import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GlyphGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.shape_branch = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU())
        self.shape_out = nn.Conv2d(8, 1, 1)
        self.texture_out = nn.Conv2d(8, 3, 1)

    def forward(self, x):
        h = self.shape_branch(x)
        return torch.sigmoid(self.shape_out(h)), torch.tanh(self.texture_out(h))


class AGISNetModel:
    def __init__(self):
        self.netG = GlyphGenerator()
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=2e-4)

    def backward_G(self, x, shape_gt, color_gt):
        fake_shape, fake_color = self.netG(x)
        loss_shape = F.l1_loss(fake_shape, shape_gt)
        loss_color = F.l1_loss(fake_color, color_gt)
        loss_shape.backward(retain_graph=True)
        loss_color.backward()

    def optimize_parameters(self, x, shape_gt, color_gt):
        self.optimizer_G.zero_grad()
        self.backward_G(x, shape_gt, color_gt)
        self.optimizer_G.step()


model = AGISNetModel()
for _ in range(2):
    model.optimize_parameters(torch.rand(2, 1, 8, 8), torch.rand(2, 1, 8, 8), torch.rand(2, 3, 8, 8) * 2 - 1)
