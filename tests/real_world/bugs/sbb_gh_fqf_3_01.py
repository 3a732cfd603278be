import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Adam, RMSprop

torch.manual_seed(0)


def update_params(optim, loss, networks, retain_graph=False, grad_cliping=None):
    optim.zero_grad()
    loss.backward(retain_graph=retain_graph)
    # Clip norms of gradients to stebilize training.
    if grad_cliping:
        for net in networks:
            torch.nn.utils.clip_grad_norm_(net.parameters(), grad_cliping)
    optim.step()


class FractionProposalNetwork(nn.Module):
    def __init__(self, N=4, embedding_dim=8):
        super(FractionProposalNetwork, self).__init__()
        self.net = nn.Linear(embedding_dim, N)
        self.N = N

    def forward(self, state_embeddings):
        batch_size = state_embeddings.shape[0]
        log_probs = F.log_softmax(self.net(state_embeddings), dim=1)
        probs = log_probs.exp()
        tau_0 = torch.zeros((batch_size, 1))
        taus_1_N = torch.cumsum(probs, dim=1)
        taus = F.pad(taus_1_N, (1, 0))
        tau_hats = (taus[:, :-1] + taus[:, 1:]).detach() / 2.
        entropies = -(log_probs * probs).sum(dim=-1, keepdim=True)
        return taus, tau_hats, entropies


class FQF(nn.Module):
    def __init__(self, num_actions=2, N=4, embedding_dim=8):
        super(FQF, self).__init__()
        self.dqn_net = nn.Sequential(nn.Linear(5, embedding_dim), nn.ReLU())
        self.fraction_net = FractionProposalNetwork(N, embedding_dim)
        self.cosine_net = nn.Linear(6, embedding_dim)
        self.quantile_net = nn.Linear(embedding_dim, num_actions)

    def calculate_state_embeddings(self, states):
        return self.dqn_net(states)

    def calculate_fractions(self, state_embeddings):
        return self.fraction_net(state_embeddings)

    def calculate_quantiles(self, taus, state_embeddings):
        i_pi = torch.pi * torch.arange(1, 7).view(1, 1, 6)
        tau_embeddings = F.relu(self.cosine_net(torch.cos(taus.unsqueeze(-1) * i_pi)))
        return self.quantile_net(state_embeddings.unsqueeze(1) * tau_embeddings)


class FQFAgent:
    def __init__(self, ent_coef=0.01, grad_cliping=None):
        self.online_net = FQF()
        self.ent_coef, self.grad_cliping = ent_coef, grad_cliping
        self.fraction_optim = RMSprop(self.online_net.fraction_net.parameters(), lr=2.5e-9, alpha=0.95, eps=0.00001)
        self.quantile_optim = Adam(list(self.online_net.dqn_net.parameters()) + list(self.online_net.cosine_net.parameters())
                                   + list(self.online_net.quantile_net.parameters()), lr=5e-5, eps=1e-2 / 32)

    def learn(self, states, actions, rewards):
        # Calculate embeddings of current states.
        state_embeddings = self.online_net.calculate_state_embeddings(states)

        # Calculate fractions of current states and entropies.
        taus, tau_hats, entropies = self.online_net.calculate_fractions(state_embeddings=state_embeddings)

        # Calculate quantile values of current states and actions at tau_hats.
        current_sa_quantile_hats = self.online_net.calculate_quantiles(tau_hats, state_embeddings)
        current_sa_quantile_hats = current_sa_quantile_hats.gather(2, actions.view(-1, 1, 1).expand(-1, tau_hats.size(1), 1))

        # NOTE: Detach current_sa_quantile_hats because I calculate gradients of taus explicitly, not by backpropagation.
        fraction_loss = (taus[:, 1:-1] * current_sa_quantile_hats[:, :-1, 0].detach()).sum(dim=1).mean()
        quantile_loss = F.smooth_l1_loss(current_sa_quantile_hats[..., 0], rewards.expand_as(current_sa_quantile_hats[..., 0]))

        entropy_loss = -self.ent_coef * entropies.mean()

        update_params(self.fraction_optim, fraction_loss + entropy_loss, networks=[self.online_net.fraction_net],
                      retain_graph=True, grad_cliping=self.grad_cliping)
        update_params(self.quantile_optim, quantile_loss + entropy_loss,
                      networks=[self.online_net.dqn_net, self.online_net.cosine_net, self.online_net.quantile_net],
                      retain_graph=False, grad_cliping=self.grad_cliping)


agent = FQFAgent()
for _ in range(2):
    agent.learn(torch.randn(4, 5), torch.randint(0, 2, (4,)), torch.randn(4, 1))
