import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Critic(nn.Module):
    def __init__(self, feat_dim, act_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(feat_dim + act_dim, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, feat, act):
        return self.net(torch.cat([feat, act], -1))


class COMBOPolicy:
    def __init__(self, obs_dim=6, act_dim=2, cql_weight=1.0):
        self.encoder = nn.Sequential(nn.Linear(obs_dim, 16), nn.Tanh())
        self.critic1, self.critic2 = Critic(16, act_dim), Critic(16, act_dim)
        self.critic1_optim = torch.optim.Adam(list(self.critic1.parameters()) + list(self.encoder.parameters()), lr=3e-4)
        self.critic2_optim = torch.optim.Adam(self.critic2.parameters(), lr=3e-4)
        self.cql_weight, self.act_dim = cql_weight, act_dim

    def learn(self, obss, actions, target_q):
        obs_feat = self.encoder(obss)
        q1, q2 = self.critic1(obs_feat, actions), self.critic2(obs_feat, actions)
        random_actions = torch.rand(obss.size(0), self.act_dim) * 2 - 1
        cql1 = torch.logsumexp(torch.cat([self.critic1(obs_feat, random_actions), q1], 1), 1).mean() - q1.mean()
        cql2 = torch.logsumexp(torch.cat([self.critic2(obs_feat, random_actions), q2], 1), 1).mean() - q2.mean()
        critic1_loss = F.mse_loss(q1, target_q) + self.cql_weight * cql1
        critic2_loss = F.mse_loss(q2, target_q) + self.cql_weight * cql2
        self.critic1_optim.zero_grad()
        critic1_loss.backward(retain_graph=True)
        self.critic1_optim.step()
        self.critic2_optim.zero_grad()
        critic2_loss.backward()
        self.critic2_optim.step()


policy = COMBOPolicy()
policy.learn(torch.randn(8, 6), torch.rand(8, 2) * 2 - 1, torch.randn(8, 1))
