"""
Implements WDGRL:
Wasserstein Distance Guided Representation Learning, Shen et al. (2017)
"""
import torch
from torch import nn
from torch.autograd import Variable, grad

torch.manual_seed(0)


def set_requires_grad(model, requires_grad=True):
    for param in model.parameters():
        param.requires_grad = requires_grad


def gradient_penalty(critic, h_s, h_t):
    # based on: https://github.com/caogang/wgan-gp/blob/master/gan_cifar10.py#L116
    alpha = torch.rand(h_s.size(0), 1)
    differences = h_t - h_s
    interpolates = h_s + (alpha * differences)
    interpolates = torch.stack([interpolates, h_s, h_t])
    interpolates = Variable(interpolates, requires_grad=True)

    preds = critic(interpolates)
    gradients = grad(preds, interpolates, grad_outputs=torch.ones(*preds.shape), retain_graph=True, create_graph=True)[0]
    gradient_norm = gradients.norm(2, dim=1)
    gradient_penalty = ((gradient_norm - 1) ** 2).mean()
    return gradient_penalty


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.feature_extractor = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten())
        self.classifier = nn.Linear(4 * 4 * 4, 10)


class Args:
    iterations, epochs, k_critic, k_clf, gamma, wd_clf = 2, 1, 2, 1, 10, 1


args = Args()
clf_model = Net()
feature_extractor = clf_model.feature_extractor
discriminator = clf_model.classifier
critic = nn.Sequential(nn.Linear(64, 8), nn.ReLU(), nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 1))
critic_optim = torch.optim.Adam(critic.parameters(), lr=1e-4)
clf_optim = torch.optim.Adam(clf_model.parameters(), lr=1e-4)
clf_criterion = nn.CrossEntropyLoss()
batches = [((torch.rand(2, 3, 6, 6), torch.randint(0, 10, (2,))), (torch.rand(2, 3, 6, 6), None)) for _ in range(args.iterations)]

for epoch in range(1, args.epochs + 1):
    batch_iterator = iter(batches)
    total_loss = 0
    for _ in range(args.iterations):
        (source_x, source_y), (target_x, _) = next(batch_iterator)
        # Train critic
        set_requires_grad(feature_extractor, requires_grad=False)
        set_requires_grad(critic, requires_grad=True)

        h_s = feature_extractor(source_x).data.view(source_x.shape[0], -1)
        h_t = feature_extractor(target_x).data.view(target_x.shape[0], -1)
        for _ in range(args.k_critic):
            gp = gradient_penalty(critic, h_s, h_t)

            critic_s = critic(Variable(h_s))
            critic_t = critic(Variable(h_t))
            wasserstein_distance = critic_s.mean() - critic_t.mean()

            critic_cost = -wasserstein_distance + args.gamma * gp

            critic_optim.zero_grad()
            critic_cost.backward()
            critic_optim.step()

            total_loss += float(critic_cost)

        # Train classifier
        set_requires_grad(feature_extractor, requires_grad=True)
        set_requires_grad(critic, requires_grad=False)
        for _ in range(args.k_clf):
            source_features = feature_extractor(source_x).view(source_x.shape[0], -1)
            target_features = feature_extractor(target_x).view(target_x.shape[0], -1)

            source_preds = discriminator(source_features)
            clf_loss = clf_criterion(source_preds, source_y)
            wasserstein_distance = critic(source_features).mean() - critic(target_features).mean()

            loss = clf_loss + args.wd_clf * wasserstein_distance
            clf_optim.zero_grad()
            loss.backward()
            clf_optim.step()
