import torch
import torch.nn as nn
import torch.nn.functional as F


class DINOLoss(nn.Module):
    def __init__(self, out_dim=8, student_temp=0.1, teacher_temp=0.04, center_momentum=0.9):
        super().__init__()
        self.student_temp, self.teacher_temp = student_temp, teacher_temp
        self.center_momentum = center_momentum
        self.center = torch.zeros(1, out_dim)

    def forward(self, student_out, teacher_out):
        t = F.softmax((teacher_out - self.center) / self.teacher_temp, dim=-1)
        loss = torch.sum(-t * F.log_softmax(student_out / self.student_temp, dim=-1), dim=-1).mean()
        self.update_center(teacher_out)
        return loss

    @torch.no_grad()
    def update_center(self, teacher_out):
        batch_center = teacher_out.mean(dim=0, keepdim=True)
        self.center = self.center * self.center_momentum + batch_center * (1 - self.center_momentum)
