import torch
from torch import nn

torch.manual_seed(0)


def accuracy_fn(y_true, y_pred):
    correct = torch.eq(y_true, y_pred).sum().item()
    return (correct / len(y_pred)) * 100


def test_step(data_loader, model, loss_fn, accuracy_fn, device="cpu"):
    test_loss, test_acc = 0, 0
    model.to(device)
    model.eval()
    with torch.inference_mode():
        for X, y in data_loader:
            X, y = X.to(device), y.to(device)
            test_pred = model(X)
            test_loss += loss_fn(test_pred, y)
            test_acc += accuracy_fn(y_true=y, y_pred=test_pred.argmax(dim=1))

    test_loss /= len(data_loader)
    test_acc /= len(data_loader)
    print(f"Test loss: {test_loss:.5f} | Test acc: {test_acc:.2f}%\n")


model_1 = nn.Sequential(nn.Flatten(), nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 3))
test_dataloader = [(torch.randn(4, 1, 4, 4), torch.randint(0, 3, (4,))) for _ in range(3)]
for epoch in range(1):
    test_step(data_loader=test_dataloader, model=model_1, loss_fn=nn.CrossEntropyLoss(), accuracy_fn=accuracy_fn)
