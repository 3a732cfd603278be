import torch
import torch.nn as nn

torch.manual_seed(0)


def masked_softmax(vec, mask, dim=-1, mode='softmax', soft_blend=1):
    if mode == 'softmax':
        vec = torch.distributions.Bernoulli(logits=vec).probs
        masked_exps = torch.exp(soft_blend * vec) * mask.float()
        masked_exps_sum = masked_exps.sum(dim)
        output = torch.zeros_like(vec)
        output[masked_exps_sum > 0, :] = masked_exps[masked_exps_sum > 0, :] / masked_exps_sum[masked_exps_sum > 0].unsqueeze(-1)
        output = (output * vec).sum(dim, keepdim=True)
        output = torch.logit(output.clamp(1e-6, 1 - 1e-6))
    elif mode == 'max':
        vec[~mask.bool()] = -1e6
        output = torch.max(vec, dim, keepdim=True)[0]
    return output, vec


class ImplicitNetwork(nn.Module):
    def __init__(self, d_in=3, d_out=1, n_init=4):
        super().__init__()
        self.n_init = n_init
        self.lin = nn.Sequential(nn.Linear(d_in, 16), nn.Softplus(beta=100), nn.Linear(16, d_out + 3))

    def forward(self, pts):
        out = self.lin(pts)
        shape_pd, color_pd = torch.split(out, [1, 3], dim=-1)
        return shape_pd, color_pd


class XAvatarModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.shape_network = ImplicitNetwork()

    def forward(self, pts_surf, mask):
        n_batch, n_point, n_init, n_dim = pts_surf.shape
        shape_pd, color_pd = self.shape_network(pts_surf.reshape(n_batch, n_point * n_init, n_dim))
        shape_pd = shape_pd.reshape(n_batch, n_point, n_init)
        shape_pd, index = masked_softmax(shape_pd, mask, dim=-1, mode='max')
        return shape_pd, color_pd


model = XAvatarModel()
pts = torch.randn(1, 5, 4, 3)
mask = torch.rand(1, 5, 4) > 0.3
shape_pd, color_pd = model(pts, mask)
shape_pd.sum().backward()
