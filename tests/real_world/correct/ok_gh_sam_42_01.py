import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AgingNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ReLU())
        self.decoder = nn.Conv2d(8, 3, 3, padding=1)

    def forward(self, x, target_age):
        age_map = target_age.view(-1, 1, 1, 1).expand(-1, 1, x.size(2), x.size(3))
        return torch.tanh(self.decoder(self.encoder(torch.cat([x, age_map], 1))))


class Coach:
    def __init__(self):
        self.net = AgingNet()
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-4)

    def train_step(self, x, input_age, target_age):
        self.optimizer.zero_grad()
        y_hat = self.net(x, target_age)
        loss = F.l1_loss(y_hat, x) + 0.1 * y_hat.pow(2).mean()
        loss.backward()
        y_hat_clone = y_hat.clone().detach().requires_grad_(True)
        y_recovered = self.net(y_hat_clone, input_age)
        loss_cycle = F.l1_loss(y_recovered, x)
        loss_cycle.backward()
        self.optimizer.step()


coach = Coach()
for _ in range(2):
    coach.train_step(torch.rand(2, 3, 8, 8), torch.rand(2), torch.rand(2))
