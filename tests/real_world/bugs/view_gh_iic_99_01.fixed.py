import sys

import torch
import torch.nn as nn

torch.manual_seed(0)


def compute_joint(x_out, x_tf_out):
    bn, k = x_out.size()
    p_i_j = x_out.unsqueeze(2) * x_tf_out.unsqueeze(1)
    p_i_j = p_i_j.sum(dim=0)
    p_i_j = (p_i_j + p_i_j.t()) / 2.
    p_i_j = p_i_j / p_i_j.sum()
    return p_i_j


def IID_loss(x_out, x_tf_out, lamb=1.0, EPS=sys.float_info.epsilon):
    _, k = x_out.size()
    p_i_j = compute_joint(x_out, x_tf_out)
    p_i = p_i_j.sum(dim=1).view(k, 1).expand(k, k).clone()
    p_j = p_i_j.sum(dim=0).view(1, k).expand(k, k).clone()
    p_i_j[(p_i_j < EPS).data] = EPS
    p_j[(p_j < EPS).data] = EPS
    p_i[(p_i < EPS).data] = EPS
    loss = - p_i_j * (torch.log(p_i_j) - lamb * torch.log(p_j) - lamb * torch.log(p_i))
    return loss.sum()


net = nn.Sequential(nn.Linear(6, 5), nn.Softmax(dim=1))
opt = torch.optim.Adam(net.parameters(), lr=1e-4)
x = torch.randn(7, 6)
x_tf = x + 0.1 * torch.randn(7, 6)
for _ in range(2):
    net.zero_grad()
    avg_loss_batch = IID_loss(net(x), net(x_tf))
    avg_loss_batch.backward()
    opt.step()
