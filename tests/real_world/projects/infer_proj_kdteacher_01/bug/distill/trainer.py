import torch.nn.functional as F


class DistillTrainer:
    def __init__(self, student, teacher, opt, temperature=2.0, alpha=0.5):
        self.student, self.teacher, self.opt = student, teacher, opt
        self.t, self.alpha = temperature, alpha

    def step(self, x, y):
        logits = self.student(x)
        targets = self.teacher.soft_targets(x, self.t)
        kd = F.kl_div(F.log_softmax(logits / self.t, dim=-1), targets, reduction="batchmean")
        loss = self.alpha * kd * self.t ** 2 + (1 - self.alpha) * F.cross_entropy(logits, y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()
