import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Linear(4, 1)
criterion = nn.MSELoss()
lr = 0.01
data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]

# 手写梯度下降
for x, y in data:
    pred = model(x)
    loss = criterion(pred, y)
    loss.backward()
    for p in model.parameters():
        p -= lr * p.grad  # 使用 in-place 操作
        p.grad.zero_()
