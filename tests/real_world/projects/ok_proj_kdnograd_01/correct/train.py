import torch
import torch.nn as nn

from kd.evaluate import accuracy
from kd.teacher import Teacher
from kd.trainer import distill_step

torch.manual_seed(0)
teacher = Teacher(nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 4)))
student = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))
opt = torch.optim.SGD(student.parameters(), lr=0.1)
x, y = torch.randn(64, 10), torch.randint(0, 4, (64,))
for epoch in range(3):
    loss = distill_step(student, teacher, opt, x, y)
    print(epoch, loss, accuracy(student, x, y))
