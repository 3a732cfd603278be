import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class KDLoss(nn.KLDivLoss):
    def __init__(self, temperature=4.0):
        super().__init__(reduction="batchmean")
        self.temperature = temperature


class DistillationBox:
    def __init__(self, teacher, student, temperature=4.0):
        self.teacher, self.student = teacher.eval(), student
        self.criterion = KDLoss(temperature)
        self.optimizer = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9)
        self.temperature = temperature

    def forward_process(self, sample_batch):
        with torch.inference_mode():
            teacher_outputs = self.teacher(sample_batch)
            teacher_probs = F.softmax(teacher_outputs / self.temperature, dim=1)
        student_outputs = self.student(sample_batch)
        student_log_probs = F.log_softmax(student_outputs / self.temperature, dim=1)
        loss = self.criterion(student_log_probs, teacher_probs)
        return loss * self.temperature ** 2

    def train_step(self, sample_batch):
        loss = self.forward_process(sample_batch)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


teacher = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 5))
student = nn.Sequential(nn.Linear(10, 8), nn.ReLU(), nn.Linear(8, 5))
box = DistillationBox(teacher, student)
for _ in range(2):
    box.train_step(torch.randn(6, 10))
