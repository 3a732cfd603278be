import torch
import torch.nn as nn

torch.manual_seed(0)


def _transform(theta, input_dim, out_size, eps=1e-7):
    num_batch = input_dim.size(0)
    height, width = out_size
    theta = theta.reshape(-1, 3, 3)
    x_t = torch.linspace(-1.0, 1.0, width).repeat(height)
    y_t = torch.linspace(-1.0, 1.0, height).repeat_interleave(width)
    ones = torch.ones_like(x_t)
    grid = torch.stack([x_t, y_t, ones]).unsqueeze(0).expand(num_batch, 3, height * width)
    T_g = torch.matmul(theta, grid)
    x_s, y_s, t_s = torch.chunk(T_g, 3, dim=1)
    t_s_flat = t_s.reshape([-1])
    t_s_flat[t_s_flat.abs() < eps] = eps
    x_s_flat = x_s.reshape(-1) / t_s_flat
    y_s_flat = y_s.reshape(-1) / t_s_flat
    return torch.stack([x_s_flat, y_s_flat], -1).reshape(num_batch, height, width, 2)


class HNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2 * 8 * 8, 9)

    def forward(self, img1, img2):
        feat = torch.cat([img1, img2], 1).flatten(1)
        H = self.fc(feat) * 0.01 + torch.eye(3).flatten()
        grid = _transform(H, img1, (8, 8))
        warped = nn.functional.grid_sample(img2, grid, align_corners=True)
        return (warped - img1).abs().mean()


net = HNet()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
img1, img2 = torch.rand(1, 1, 8, 8), torch.rand(1, 1, 8, 8)
for _ in range(2):
    opt.zero_grad()
    loss = net(img1, img2)
    loss.backward()
    opt.step()
