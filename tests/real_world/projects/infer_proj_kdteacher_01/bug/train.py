import torch

from distill import DistillTrainer
from distill.teacher import FrozenTeacher
from nets import student_net, teacher_net

torch.manual_seed(0)
student = student_net()
trainer = DistillTrainer(student, FrozenTeacher(teacher_net()), torch.optim.SGD(student.parameters(), lr=0.1))
x = torch.randn(64, 10)
y = torch.randint(0, 4, (64,))
for epoch in range(3):
    print(epoch, trainer.step(x, y))
