import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, z_dim, vertexes, edges, nodes):
        super(Generator, self).__init__()
        self.vertexes, self.edges, self.nodes = vertexes, edges, nodes
        self.layers = nn.Sequential(nn.Linear(z_dim, 16), nn.Tanh())
        self.edges_layer = nn.Linear(16, edges * vertexes * vertexes)
        self.nodes_layer = nn.Linear(16, vertexes * nodes)

    def forward(self, x):
        output = self.layers(x)
        edges_logits = self.edges_layer(output).view(-1, self.edges, self.vertexes, self.vertexes)
        edges_logits = (edges_logits + edges_logits.permute(0, 1, 3, 2)) / 2
        edges_logits = edges_logits.permute(0, 2, 3, 1)
        nodes_logits = self.nodes_layer(output).view(-1, self.vertexes, self.nodes)
        return edges_logits, nodes_logits


class Discriminator(nn.Module):
    def __init__(self, vertexes, edges, nodes):
        super(Discriminator, self).__init__()
        self.gcn = nn.Linear(nodes, 8)
        self.output_layer = nn.Linear(8, 1)

    def forward(self, adj, hidden, node, activation=None):
        h = torch.tanh(self.gcn(node))
        h = torch.einsum('bijk,bjc->bic', adj, h).sum(1)
        output = self.output_layer(h)
        output = activation(output) if activation is not None else output
        return output, h


class Solver(object):
    def __init__(self):
        self.z_dim, self.n_critic = 4, 1
        self.G = Generator(self.z_dim, 5, 3, 4)
        self.D = Discriminator(5, 3, 4)
        self.V = Discriminator(5, 3, 4)
        self.g_optimizer = torch.optim.Adam(self.G.parameters(), 1e-3)
        self.d_optimizer = torch.optim.Adam(self.D.parameters(), 1e-3)
        self.v_optimizer = torch.optim.Adam(self.V.parameters(), 1e-3)

    def reset_grad(self):
        self.g_optimizer.zero_grad()
        self.d_optimizer.zero_grad()
        self.v_optimizer.zero_grad()

    def postprocess(self, inputs):
        return [F.softmax(e_logits, -1) for e_logits in inputs]

    def train_or_valid(self, epoch_i, train_val_test='train'):
        for cur_step in range(2):
            a_tensor = torch.rand(4, 5, 5, 3)
            x_tensor = torch.rand(4, 5, 4)
            z = torch.randn(4, self.z_dim)
            reward_r = torch.rand(4, 1)
            reward_f = torch.rand(4, 1)

            # Current steps for Generator and Value network
            edges_logits, nodes_logits = self.G(z)
            (edges_hat, nodes_hat) = self.postprocess((edges_logits, nodes_logits))
            logits_fake, features_fake = self.D(edges_hat, None, nodes_hat)

            # Value losses (RL).
            value_logits_real, _ = self.V(a_tensor, None, x_tensor, torch.sigmoid)
            value_logits_fake, _ = self.V(edges_hat, None, nodes_hat, torch.sigmoid)
            loss_G = -logits_fake.mean()
            loss_V = torch.mean((value_logits_real - reward_r) ** 2 + (value_logits_fake - reward_f) ** 2)

            train_step_G = loss_G
            train_step_V = loss_V

            self.reset_grad()

            # Optimise generator.
            if cur_step % self.n_critic == 0:
                train_step_G.backward(retain_graph=True)
                self.g_optimizer.step()

            # Optimise value network.
            if cur_step % self.n_critic == 0:
                train_step_V.backward()
                self.v_optimizer.step()

    def train_and_validate(self):
        for i in range(1):
            self.train_or_valid(epoch_i=i, train_val_test='train')


solver = Solver()
solver.train_and_validate()
