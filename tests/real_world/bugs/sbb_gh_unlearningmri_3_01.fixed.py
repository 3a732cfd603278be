import torch
import torch.nn as nn

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.feature = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 8), nn.ReLU())

    def forward(self, x):
        return self.feature(x)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc(x)


class DomainPredictor(nn.Module):
    def __init__(self, nodes=3):
        super().__init__()
        self.fc = nn.Linear(8, nodes)

    def forward(self, x):
        return self.fc(x)


class ConfusionLoss(nn.Module):
    def forward(self, x, target):
        log = torch.log_softmax(x, dim=1)
        return -torch.mean(torch.sum(log, dim=1) / x.size(1))


def train_unlearn_threedatasets(args, models, train_loaders, optimizers, criterions, epoch):
    [encoder, regressor, domain_predictor] = models
    [optimizer, optimizer_conf, optimizer_dm] = optimizers
    [b1_loader, b2_loader, b3_loader] = train_loaders
    [criteron, conf_criterion, domain_criterion] = criterions
    regressor.train()
    encoder.train()
    domain_predictor.train()
    for batch_idx, ((b1_data, b1_target), (b2_data, b2_target), (b3_data, b3_target)) in enumerate(
            zip(b1_loader, b2_loader, b3_loader)):
        data = torch.cat((b1_data, b2_data, b3_data), 0)
        target = torch.cat((b1_target, b2_target, b3_target), 0)
        domain_target = torch.cat((torch.zeros(b1_data.size(0)), torch.ones(b2_data.size(0)),
                                   2 * torch.ones(b3_data.size(0))), 0).long()

        # First update the encoder and regressor
        optimizer.zero_grad()
        features = encoder(data)
        output_pred = regressor(features)
        loss = criteron(output_pred, target)
        loss.backward()
        optimizer.step()

        # Now update just the domain classifier
        optimizer_dm.zero_grad()
        output_dm = domain_predictor(features.detach())
        loss_dm = domain_criterion(output_dm, domain_target)
        loss_dm.backward(retain_graph=False)
        optimizer_dm.step()

        # Now update just the encoder using the domain loss
        optimizer_conf.zero_grad()
        features = encoder(data)
        output_dm_conf = domain_predictor(features)
        loss_conf = args.beta * conf_criterion(output_dm_conf, domain_target)
        loss_conf.backward(retain_graph=False)
        optimizer_conf.step()


class Args:
    beta = 10


encoder, regressor, domain_predictor = Encoder(), Regressor(), DomainPredictor()
optimizer = torch.optim.Adam(list(encoder.parameters()) + list(regressor.parameters()), lr=1e-4)
optimizer_conf = torch.optim.Adam(list(encoder.parameters()), lr=1e-4)
optimizer_dm = torch.optim.Adam(list(domain_predictor.parameters()), lr=1e-4)
loaders = [[(torch.randn(2, 10), torch.randn(2, 1))] * 2 for _ in range(3)]
train_unlearn_threedatasets(Args(), [encoder, regressor, domain_predictor], loaders,
                            [optimizer, optimizer_conf, optimizer_dm],
                            [nn.MSELoss(), ConfusionLoss(), nn.CrossEntropyLoss()], epoch=1)
