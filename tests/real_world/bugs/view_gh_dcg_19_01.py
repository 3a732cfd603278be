import torch
import torch.nn as nn

torch.manual_seed(0)


class DCGMAC:
    """Deep coordination graph controller: utilities and pairwise payoffs of the agents."""

    def __init__(self, n_agents=3, n_actions=4, hidden=8):
        self.n_agents, self.n_actions = n_agents, n_actions
        self.utility_fun = nn.Linear(hidden, n_actions)
        self.payoff_fun = nn.Linear(2 * hidden, n_actions * n_actions)
        self.edges_from = torch.tensor([0, 1])
        self.edges_to = torch.tensor([1, 2])

    def single_payoff(self, input):
        n = self.n_actions
        inputs = torch.stack([torch.cat([input[:, self.edges_from], input[:, self.edges_to]], dim=-1),
                              torch.cat([input[:, self.edges_to], input[:, self.edges_from]], dim=-1)], dim=0)
        output = self.payoff_fun(inputs)
        output = output.view(*output.shape[:-1], n, n)
        output[1] = output[1].transpose(dim0=-2, dim1=-1)
        return output.mean(dim=0)

    def annotations(self, hidden_states):
        f_i = self.utility_fun(hidden_states)
        f_ij = self.single_payoff(hidden_states)
        return f_i, f_ij


mac = DCGMAC()
with torch.no_grad():
    f_i, f_ij = mac.annotations(torch.randn(2, 3, 8))
print(f_ij.shape)
