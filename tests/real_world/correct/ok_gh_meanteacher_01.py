import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Args:
    ema_decay = 0.999
    consistency = 100.0
    consistency_rampup = 5


args = Args()
global_step = 0


def create_model(ema=False):
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 3))
    if ema:
        for param in model.parameters():
            param.detach_()
    return model


def softmax_mse_loss(input_logits, target_logits):
    input_softmax = F.softmax(input_logits, dim=1)
    target_softmax = F.softmax(target_logits, dim=1)
    num_classes = input_logits.size()[1]
    return F.mse_loss(input_softmax, target_softmax, reduction='sum') / num_classes


def update_ema_variables(model, ema_model, alpha, global_step):
    # Use the true average until the exponential average is more correct
    alpha = min(1 - 1 / (global_step + 1), alpha)
    for ema_param, param in zip(ema_model.parameters(), model.parameters()):
        ema_param.data.mul_(alpha).add_(param.data, alpha=1 - alpha)


def train(train_loader, model, ema_model, optimizer, epoch):
    global global_step
    class_criterion = nn.CrossEntropyLoss(reduction='sum', ignore_index=-1)
    model.train()
    ema_model.train()
    for i, ((input, ema_input), target) in enumerate(train_loader):
        minibatch_size = len(target)
        ema_model_out = ema_model(ema_input)
        model_out = model(input)
        ema_logit = ema_model_out.detach()
        class_loss = class_criterion(model_out, target) / minibatch_size
        consistency_loss = args.consistency * softmax_mse_loss(model_out, ema_logit) / minibatch_size
        loss = class_loss + consistency_loss

        # compute gradient and do SGD step
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        global_step += 1
        update_ema_variables(model, ema_model, args.ema_decay, global_step)


model = create_model()
ema_model = create_model(ema=True)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loader = [((torch.randn(4, 6), torch.randn(4, 6)), torch.tensor([0, 1, -1, 2])) for _ in range(3)]
train(loader, model, ema_model, optimizer, epoch=0)
