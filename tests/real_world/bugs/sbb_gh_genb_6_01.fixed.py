import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BaseModel(nn.Module):
    def __init__(self, v_dim=6, q_dim=5, num_ans=4):
        super().__init__()
        self.fc = nn.Linear(v_dim + q_dim, num_ans)

    def forward(self, v, q, gen=False):
        return self.fc(torch.cat([v, q], 1))


class GenB(nn.Module):
    def __init__(self, v_dim=6, q_dim=5, num_ans=4):
        super().__init__()
        self.fc1 = nn.Linear(v_dim + q_dim + 3, 16)
        self.fc2 = nn.Linear(16, num_ans)

    def forward(self, v, q, gen=True):
        z = torch.randn(v.size(0), 3)
        return self.fc2(F.relu(self.fc1(torch.cat([v, q, z], 1))))


class Discriminator(nn.Module):
    def __init__(self, num_ans=4):
        super().__init__()
        self.fc = nn.Linear(num_ans, 1)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))


def train(model, genb, discriminator, train_loader, num_epochs=1):
    optim = torch.optim.Adamax(model.parameters())
    optim_G = torch.optim.Adamax(genb.parameters(), lr=0.001)
    optim_D = torch.optim.Adamax(discriminator.parameters(), lr=0.001)
    kld = nn.KLDivLoss(reduction='batchmean')
    bce = nn.BCELoss()
    for epoch in range(num_epochs):
        for i, (v, q, a) in enumerate(train_loader):
            # get model output
            optim.zero_grad()
            pred = model(v, q)

            # train genb
            optim_G.zero_grad()
            pred_g = genb(v, q, gen=True)
            g_loss = F.binary_cross_entropy_with_logits(pred_g, a, reduction='none').mean()
            g_loss = g_loss * a.size(1)
            vae_preds = discriminator(torch.sigmoid(pred_g))
            main_preds = discriminator(a)
            g_distill = kld(F.log_softmax(pred_g, 1), F.softmax(pred.detach(), 1))
            dsc_loss = bce(vae_preds, torch.ones_like(vae_preds))
            g_loss = g_loss + dsc_loss + g_distill * 5
            g_loss.backward(retain_graph=True)

            # train the discriminator
            optim_D.zero_grad()
            dsc_loss = bce(main_preds, torch.ones_like(main_preds)) + bce(vae_preds, torch.zeros_like(vae_preds))
            dsc_loss.backward(retain_graph=True)
            optim_G.step()
            optim_D.step()

            # use genb to train the robust model
            loss = F.binary_cross_entropy_with_logits(pred - pred_g.detach(), a)
            loss.backward()
            optim.step()


loader = [(torch.randn(4, 6), torch.randn(4, 5), torch.randint(0, 2, (4, 4)).float()) for _ in range(2)]
train(BaseModel(), GenB(), Discriminator(), loader)
