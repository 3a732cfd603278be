import torch
import torch.nn as nn

torch.manual_seed(0)


class LearnedKalmanFilter(nn.Module):
    def __init__(self, dim_x=4, dim_z=2, dt=0.1):
        super().__init__()
        self.F_mat = torch.eye(dim_x) + dt * torch.diag(torch.ones(dim_x - 2), diagonal=2)
        self.H = torch.eye(dim_z, dim_x)
        self.log_q = nn.Parameter(torch.full((dim_x,), -3.0))
        self.log_r = nn.Parameter(torch.full((dim_z,), -1.0))
        self.dim_x = dim_x

    def reset(self):
        self.x = torch.zeros(self.dim_x)
        self.P = torch.eye(self.dim_x)

    def predict(self):
        self.x = self.F_mat @ self.x
        self.P = self.F_mat @ self.P @ self.F_mat.T + torch.diag(self.log_q.exp())

    def update(self, z):
        H, R = self.H, torch.diag(self.log_r.exp())
        S = H @ self.P @ H.T + R
        K = self.P @ H.T @ torch.linalg.inv(S)
        self.x = self.x + K @ (z - H @ self.x)
        self.P -= K @ H @ self.P

    def forward(self, measurements):
        self.reset()
        estimates = []
        for z in measurements:
            self.predict()
            self.update(z)
            estimates.append(self.x[:2])
        return torch.stack(estimates)


truth = torch.cumsum(torch.randn(10, 2) * 0.1, 0)
measurements = truth + 0.3 * torch.randn(10, 2)
kf = LearnedKalmanFilter()
opt = torch.optim.Adam(kf.parameters(), lr=0.05)
for _ in range(2):
    loss = (kf(measurements) - truth).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
