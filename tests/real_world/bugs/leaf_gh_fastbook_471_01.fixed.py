import torch

torch.manual_seed(0)


def init_params(size, std=1.0):
    return (torch.randn(size) * std).requires_grad_()


def linear1(xb):
    return xb @ weights + bias


train_x = torch.randn(12, 28 * 28)
train_y = torch.randint(0, 2, (12, 1)).float()
weights = init_params((28 * 28, 1))
bias = init_params(1)

preds = linear1(train_x)
corrects = (preds > 0.0).float() == train_y
print(corrects.float().mean().item())

weights[0].data *= 1.0001
preds = linear1(train_x)
print(((preds > 0.0).float() == train_y).float().mean().item())


def mnist_loss(predictions, targets):
    predictions = predictions.sigmoid()
    return torch.where(targets == 1, 1 - predictions, predictions).mean()


loss = mnist_loss(linear1(train_x), train_y)
loss.backward()
