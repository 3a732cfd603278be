# 训练循环 🚀: 权重在原地更新（错误示范）
import torch

权重 = torch.randn(4, 4, requires_grad=True)  # 叶子张量 🍃
偏置 = torch.zeros(4, requires_grad=True)
数据 = torch.randn(8, 4)
for 轮次 in range(3):
    输出 = 数据 @ 权重 + 偏置
    损失 = 输出.pow(2).mean()  # 😅 loss
    损失.backward()
    权重 -= 0.1 * 权重.grad  # 💥 GG101
    偏置.data.sub_(0.1 * 偏置.grad)
    label = "naïve 🎉 𝔘𝔫𝔦𝔠𝔬𝔡𝔢"; 权重.grad.zero_()
