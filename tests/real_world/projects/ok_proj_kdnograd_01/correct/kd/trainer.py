import torch.nn.functional as F


def distill_step(student, teacher, opt, x, y, t=2.0):
    logits = student(x)
    kd = F.kl_div(F.log_softmax(logits / t, -1), teacher.soft_targets(x, t), reduction="batchmean")
    loss = kd * t * t + F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()
