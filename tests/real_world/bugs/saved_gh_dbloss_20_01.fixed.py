import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def reduce_loss(loss, reduction):
    if reduction == 'none':
        return loss
    elif reduction == 'mean':
        return loss.mean()
    return loss.sum()


def binary_cross_entropy(pred, label, weight=None, reduction='mean', avg_factor=None):
    if weight is not None:
        weight = weight.float()
    loss = F.binary_cross_entropy_with_logits(pred, label.float(), weight, reduction='none')
    return reduce_loss(loss, reduction)


class ResampleLoss(nn.Module):

    def __init__(self,
                 use_sigmoid=True,
                 reduction='mean',
                 loss_weight=1.0,
                 focal=dict(focal=True, balance_param=2.0, gamma=2),
                 map_param=dict(alpha=10.0, beta=0.2, gamma=0.1),
                 logit_reg=dict(neg_scale=5.0, neg_bias=0.1),
                 reweight_func='rebalance',
                 class_freq=None,
                 neg_class_freq=None):
        super(ResampleLoss, self).__init__()
        self.use_sigmoid = use_sigmoid
        self.loss_weight = loss_weight
        self.reduction = reduction
        self.cls_criterion = binary_cross_entropy
        self.reweight_func = reweight_func

        # focal loss params
        self.focal = focal['focal']
        self.gamma = focal['gamma']
        self.balance_param = focal['balance_param']

        # mapping function params
        self.map_alpha = map_param['alpha']
        self.map_beta = map_param['beta']
        self.map_gamma = map_param['gamma']

        self.class_freq = torch.from_numpy(np.asarray(class_freq)).float()
        self.neg_class_freq = torch.from_numpy(np.asarray(neg_class_freq)).float()
        self.num_classes = self.class_freq.shape[0]
        self.train_num = self.class_freq[0] + self.neg_class_freq[0]
        # regularization params
        self.logit_reg = logit_reg
        self.neg_scale = logit_reg['neg_scale'] if 'neg_scale' in logit_reg else 1.0
        neg_bias = logit_reg['neg_bias'] if 'neg_bias' in logit_reg else 0.0
        self.neg_bias = - torch.log(self.train_num / self.class_freq - 1) * neg_bias / self.neg_scale
        self.freq_inv = torch.ones(self.class_freq.shape) / self.class_freq

    def forward(self, cls_score, label, weight=None, avg_factor=None, reduction_override=None, **kwargs):
        reduction = (reduction_override if reduction_override else self.reduction)

        weight = self.reweight_functions(label)

        cls_score, weight = self.logit_reg_functions(label.float(), cls_score, weight)

        if self.focal:
            logpt = - self.cls_criterion(cls_score.clone(), label, weight=None, reduction='none', avg_factor=avg_factor)
            # pt is sigmoid(logit) for pos or sigmoid(-logit) for neg
            pt = torch.exp(logpt)
            loss = self.cls_criterion(cls_score, label.float(), weight=weight, reduction='none')
            loss = ((1 - pt) ** self.gamma) * loss
            loss = self.balance_param * loss
        else:
            loss = self.cls_criterion(cls_score, label.float(), weight, reduction=reduction)

        loss = self.loss_weight * loss
        return reduce_loss(loss, reduction)

    def reweight_functions(self, label):
        if self.reweight_func is None:
            return None
        return self.rebalance_weight(label.float())

    def logit_reg_functions(self, labels, logits, weight=None):
        if not self.logit_reg:
            return logits, weight
        if 'neg_bias' in self.logit_reg:
            logits = logits + self.neg_bias
        if 'neg_scale' in self.logit_reg:
            logits = logits * (1 - labels) * self.neg_scale + logits * labels
            weight = weight / self.neg_scale * (1 - labels) + weight * labels
        return logits, weight

    def rebalance_weight(self, gt_labels):
        repeat_rate = torch.sum(gt_labels.float() * self.freq_inv, dim=1, keepdim=True)
        pos_weight = self.freq_inv.clone().detach().unsqueeze(0) / repeat_rate
        # pos and neg are equally treated
        weight = torch.sigmoid(self.map_beta * (pos_weight - self.map_gamma)) + self.map_alpha
        return weight


class MultiLabelClassifier(nn.Module):
    def __init__(self, in_features=16, num_classes=6):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(in_features, 32), nn.ReLU())
        self.fc = nn.Linear(32, num_classes)
        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        return self.sigmoid(self.fc(self.backbone(x)))


class_freq = [40, 25, 12, 8, 4, 2]
neg_class_freq = [60, 75, 88, 92, 96, 98]
model = MultiLabelClassifier()
criterion = ResampleLoss(class_freq=class_freq, neg_class_freq=neg_class_freq)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for step in range(2):
    images = torch.randn(8, 16)
    labels = (torch.rand(8, 6) > 0.7).long()
    labels[:, 0] = 1
    outputs = model(images)
    loss = criterion(outputs, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
