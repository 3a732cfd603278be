import numpy as np
import torch
from torch import nn, optim
from torch.nn import functional as F

torch.manual_seed(222)


class Learner(nn.Module):
    def __init__(self, n_in=5, n_way=3):
        super(Learner, self).__init__()
        w1 = nn.Parameter(torch.ones(16, n_in))
        torch.nn.init.kaiming_normal_(w1)
        w2 = nn.Parameter(torch.ones(n_way, 16))
        torch.nn.init.kaiming_normal_(w2)
        self.vars = nn.ParameterList([w1, nn.Parameter(torch.zeros(16)), w2, nn.Parameter(torch.zeros(n_way))])

    def forward(self, x, vars=None, bn_training=True):
        if vars is None:
            vars = self.vars
        x = F.relu(F.linear(x, vars[0], vars[1]), inplace=True)
        return F.linear(x, vars[2], vars[3])

    def parameters(self):
        return self.vars


class Meta(nn.Module):
    def __init__(self, update_lr=0.4, meta_lr=1e-3, update_step=2):
        super(Meta, self).__init__()
        self.update_lr = update_lr
        self.meta_lr = meta_lr
        self.update_step = update_step
        self.net = Learner()
        self.meta_optim = optim.Adam(self.net.parameters(), lr=self.meta_lr)

    def forward(self, x_spt, y_spt, x_qry, y_qry):
        task_num = x_spt.size(0)
        querysz = x_qry.size(1)
        losses_q = [0 for _ in range(self.update_step + 1)]  # losses_q[i] is the loss on step i
        corrects = [0 for _ in range(self.update_step + 1)]

        for i in range(task_num):
            # 1. run the i-th task and compute loss for k=0
            logits = self.net(x_spt[i], vars=None, bn_training=True)
            loss = F.cross_entropy(logits, y_spt[i])
            grad = torch.autograd.grad(loss, self.net.parameters())
            fast_weights = list(map(lambda p: p[1] - self.update_lr * p[0], zip(grad, self.net.parameters())))

            for k in range(1, self.update_step):
                # 1. run the i-th task and compute loss for k=1~K-1
                logits = self.net(x_spt[i], fast_weights, bn_training=True)
                loss = F.cross_entropy(logits, y_spt[i])
                # 2. compute grad on theta_pi
                grad = torch.autograd.grad(loss, fast_weights)
                # 3. theta_pi = theta_pi - train_lr * grad
                fast_weights = list(map(lambda p: p[1] - self.update_lr * p[0], zip(grad, fast_weights)))

                logits_q = self.net(x_qry[i], fast_weights, bn_training=True)
                # loss_q will be overwritten and just keep the loss_q on last update step.
                loss_q = F.cross_entropy(logits_q, y_qry[i])
                losses_q[k + 1] += loss_q

                with torch.no_grad():
                    pred_q = F.softmax(logits_q, dim=1).argmax(dim=1)
                    correct = torch.eq(pred_q, y_qry[i]).sum().item()  # convert to numpy
                    corrects[k + 1] = corrects[k + 1] + correct

        # end of all tasks
        # sum over all losses on query set across all tasks
        loss_q = losses_q[-1] / task_num

        # optimize theta parameters
        self.meta_optim.zero_grad()
        loss_q.backward()
        self.meta_optim.step()

        accs = np.array(corrects) / (querysz * task_num)
        return accs


maml = Meta()
for step in range(2):
    x_spt, y_spt = torch.randn(2, 6, 5), torch.randint(0, 3, (2, 6))
    x_qry, y_qry = torch.randn(2, 6, 5), torch.randint(0, 3, (2, 6))
    accs = maml(x_spt, y_spt, x_qry, y_qry)
