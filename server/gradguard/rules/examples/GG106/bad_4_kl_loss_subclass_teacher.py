import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class DistillLoss(nn.KLDivLoss):
    def __init__(self, temperature=4.0):
        super().__init__(reduction="batchmean")
        self.temperature = temperature


teacher = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 5)).eval()
student = nn.Sequential(nn.Linear(10, 8), nn.ReLU(), nn.Linear(8, 5))
criterion = DistillLoss()
opt = torch.optim.SGD(student.parameters(), lr=0.1)
x = torch.randn(6, 10)
with torch.inference_mode():
    teacher_probs = F.softmax(teacher(x) / criterion.temperature, dim=1)
student_log_probs = F.log_softmax(student(x) / criterion.temperature, dim=1)
loss = criterion(student_log_probs, teacher_probs)  # <- GG106
opt.zero_grad()
loss.backward()
opt.step()
