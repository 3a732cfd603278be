import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class HomographyWarp(nn.Module):
    def __init__(self, h=8, w=8):
        super().__init__()
        self.regressor = nn.Sequential(nn.Conv2d(2, 4, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                       nn.Linear(4, 8))
        ys, xs = torch.meshgrid(torch.linspace(-1, 1, h), torch.linspace(-1, 1, w), indexing="ij")
        self.register_buffer("grid", torch.stack([xs.flatten(), ys.flatten(), torch.ones(h * w)]))
        self.h, self.w = h, w

    def forward(self, img1, img2, eps=1e-7):
        B = img1.size(0)
        offsets = self.regressor(torch.cat([img1, img2], 1)) * 0.1
        H = torch.cat([offsets, torch.ones(B, 1)], 1).view(B, 3, 3) + torch.eye(3) - torch.diag(torch.tensor([0.0, 0.0, 1.0]))
        transformed = H @ self.grid
        x_s, y_s, t_s = transformed.chunk(3, dim=1)
        t_s_flat = t_s.reshape(B, -1)
        t_s_flat[t_s_flat.abs() < eps] = eps
        x_s_flat = x_s.reshape(B, -1) / t_s_flat
        y_s_flat = y_s.reshape(B, -1) / t_s_flat
        sample_grid = torch.stack([x_s_flat, y_s_flat], -1).view(B, self.h, self.w, 2)
        return F.grid_sample(img1, sample_grid, align_corners=True)


warp = HomographyWarp()
opt = torch.optim.Adam(warp.parameters(), lr=1e-4)
for _ in range(2):
    img1, img2 = torch.rand(2, 1, 8, 8), torch.rand(2, 1, 8, 8)
    loss = F.l1_loss(warp(img1, img2), img2)
    opt.zero_grad()
    loss.backward()
    opt.step()
