import torch

# 创建两个相同的张量用于对比实验
x1 = torch.tensor([1.0, 2, 3], requires_grad=True)
x2 = torch.tensor([1.0, 2, 3], requires_grad=True)

# 对两个张量应用sigmoid激活函数
y1 = x1.sigmoid()
y2 = x2.sigmoid()

# detach() vs data 属性对比
z1 = y1.data.clone()  # a copy: zeroing it cannot change what sigmoid saved
z2 = y2.detach()

z1.zero_()

# 反向传播验证梯度计算
y1.sum().backward()
print('x1的梯度:', x1.grad)

# the true gradient of sigmoid at the forward-time values
with torch.no_grad():
    s = torch.tensor([1.0, 2, 3]).sigmoid()
    expected = s * (1 - s)
if not torch.allclose(x1.grad, expected):
    print(f"wrong gradient: x1.grad = {x1.grad.tolist()}, expected {expected.tolist()}")
