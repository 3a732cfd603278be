import torch
import torch.nn as nn

torch.manual_seed(0)


def my_kl_loss(p, q):
    res = p * (torch.log(p + 0.0001) - torch.log(q + 0.0001))
    return torch.mean(torch.sum(res, dim=-1), dim=1)


class AnomalyTransformer(nn.Module):
    def __init__(self, win_size=6, enc_in=3, d_model=8):
        super().__init__()
        self.embedding = nn.Linear(enc_in, d_model)
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.sigma = nn.Linear(d_model, 1)
        self.projection = nn.Linear(d_model, enc_in)
        self.distances = torch.abs(torch.arange(win_size)[:, None] - torch.arange(win_size)[None, :]).float()

    def forward(self, x):
        h = self.embedding(x)
        series = torch.softmax(self.q(h) @ self.k(h).transpose(1, 2) / 8 ** 0.5, dim=-1)
        sigma = torch.sigmoid(self.sigma(h) * 5) + 1e-5
        prior = torch.exp(-self.distances ** 2 / 2 / sigma ** 2)
        prior = prior / prior.sum(-1, keepdim=True)
        return self.projection(series @ h), [series], [prior], [sigma]


class Solver(object):
    def __init__(self, k=3, win_size=6):
        self.k, self.win_size = k, win_size
        self.model = AnomalyTransformer(win_size=win_size)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)
        self.criterion = nn.MSELoss()
        self.train_loader = [(torch.randn(2, win_size, 3), None) for _ in range(2)]

    def train(self):
        for epoch in range(1):
            self.model.train()
            for i, (input_data, labels) in enumerate(self.train_loader):
                self.optimizer.zero_grad()
                input = input_data.float()

                output, series, prior, _ = self.model(input)

                # calculate Association discrepancy
                series_loss = 0.0
                prior_loss = 0.0
                for u in range(len(prior)):
                    series_loss += (torch.mean(my_kl_loss(series[u], prior[u].detach()))
                                    + torch.mean(my_kl_loss(prior[u].detach(), series[u])))
                    prior_loss += (torch.mean(my_kl_loss(prior[u], series[u].detach()))
                                   + torch.mean(my_kl_loss(series[u].detach(), prior[u])))
                series_loss = series_loss / len(prior)
                prior_loss = prior_loss / len(prior)

                rec_loss = self.criterion(output, input)

                loss1 = rec_loss - self.k * series_loss
                loss2 = rec_loss + self.k * prior_loss

                # Minimax strategy
                loss1.backward(retain_graph=True)
                self.optimizer.step()
                loss2.backward()
                self.optimizer.step()


solver = Solver()
solver.train()
