from copy import deepcopy

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class DINOLoss(nn.Module):
    def __init__(self, out_dim, student_temp=0.1, center_momentum=0.9):
        super().__init__()
        self.student_temp = student_temp
        self.center_momentum = center_momentum
        self.register_buffer("center", torch.zeros(1, out_dim))
        self.updated = True
        self.len_teacher_output = None
        self.async_batch_center = None

    @torch.no_grad()
    def softmax_center_teacher(self, teacher_output, teacher_temp):
        self.apply_center_update()
        # teacher centering and sharpening
        return F.softmax((teacher_output - self.center) / teacher_temp, dim=-1)

    @torch.no_grad()
    def sinkhorn_knopp_teacher(self, teacher_output, teacher_temp, n_iterations=3):
        teacher_output = teacher_output.float()
        Q = torch.exp(teacher_output / teacher_temp).t()  # Q is K-by-B for consistency with notations from our paper
        B = Q.shape[1]  # number of samples to assign
        K = Q.shape[0]  # how many prototypes
        # make the matrix sums to 1
        sum_Q = torch.sum(Q)
        Q /= sum_Q
        for it in range(n_iterations):
            # normalize each row: total weight per prototype must be 1/K
            sum_of_rows = torch.sum(Q, dim=1, keepdim=True)
            Q /= sum_of_rows
            Q /= K
            # normalize each column: total weight per sample must be 1/B
            Q /= torch.sum(Q, dim=0, keepdim=True)
            Q /= B
        Q *= B  # the columns must sum to 1 so that Q is an assignment
        return Q.t()

    def forward(self, student_output_list, teacher_out_softmaxed_centered_list):
        total_loss = 0
        for s in student_output_list:
            lsm = F.log_softmax(s / self.student_temp, dim=-1)
            for t in teacher_out_softmaxed_centered_list:
                loss = torch.sum(t * lsm, dim=-1)
                total_loss -= loss.mean()
        return total_loss

    @torch.no_grad()
    def update_center(self, teacher_output):
        self.updated = False
        self.len_teacher_output = len(teacher_output)
        self.async_batch_center = torch.sum(teacher_output, dim=0, keepdim=True)

    @torch.no_grad()
    def apply_center_update(self):
        if self.updated is False:
            _t = self.async_batch_center / self.len_teacher_output
            self.center = self.center * self.center_momentum + _t * (1 - self.center_momentum)
            self.updated = True


class KoLeoLoss(nn.Module):
    """Kozachenko-Leonenko entropic loss regularizer from Sablayrolles et al. - 2018 - Spreading vectors for similarity search"""

    def __init__(self):
        super().__init__()
        self.pdist = nn.PairwiseDistance(2, eps=1e-8)

    def pairwise_NNs_inner(self, x):
        # parwise dot products (= inverse distance)
        dots = torch.mm(x, x.t())
        n = x.shape[0]
        dots.view(-1)[:: (n + 1)].fill_(-1)  # Trick to fill diagonal with -1
        # max inner prod -> min distance
        _, I = torch.max(dots, dim=1)  # noqa: E741
        return I

    def forward(self, student_output, eps=1e-8):
        student_output = F.normalize(student_output, eps=eps, p=2, dim=-1)
        I = self.pairwise_NNs_inner(student_output)  # noqa: E741
        distances = self.pdist(student_output, student_output[I])  # BxD, BxD -> B
        loss = -torch.log(distances + eps).mean()
        return loss


class TinyViT(nn.Module):
    def __init__(self, patch_size=4, embed_dim=16):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, embed_dim, patch_size, patch_size)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.mask_token = nn.Parameter(torch.zeros(1, embed_dim))
        self.block = nn.Sequential(nn.LayerNorm(embed_dim), nn.Linear(embed_dim, embed_dim), nn.GELU())
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x, masks=None):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        if masks is not None:
            x = torch.where(masks.unsqueeze(-1), self.mask_token.to(x.dtype).unsqueeze(0), x)
        x = torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1)
        x = x + self.block(x)
        x_norm = self.norm(x)
        return {"x_norm_clstoken": x_norm[:, 0], "x_norm_patchtokens": x_norm[:, 1:]}


class DINOHead(nn.Module):
    def __init__(self, in_dim, out_dim=32, bottleneck_dim=8):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(in_dim, 16), nn.GELU(), nn.Linear(16, bottleneck_dim))
        self.last_layer = nn.Linear(bottleneck_dim, out_dim, bias=False)

    def forward(self, x):
        x = self.mlp(x)
        x = F.normalize(x, dim=-1, p=2)
        return self.last_layer(x)


class SSLMetaArch(nn.Module):
    def __init__(self, out_dim=32):
        super().__init__()
        self.student = nn.ModuleDict(dict(backbone=TinyViT(), dino_head=DINOHead(16, out_dim)))
        self.teacher = deepcopy(self.student)
        for p in self.teacher.parameters():
            p.requires_grad = False
        self.dino_loss = DINOLoss(out_dim)
        self.koleo_loss = KoLeoLoss()
        self.ibot_loss_weight = 1.0

    def forward_backward(self, global_crops, masks, teacher_temp):
        n_global_crops = 2
        mask_indices_list = masks.flatten().nonzero().flatten()
        n_masked_patches = mask_indices_list.shape[0]
        upperbound = masks.numel()

        @torch.no_grad()
        def get_teacher_output():
            teacher_backbone_output_dict = self.teacher.backbone(global_crops)
            teacher_cls_tokens = teacher_backbone_output_dict["x_norm_clstoken"]
            teacher_cls_tokens = teacher_cls_tokens.chunk(n_global_crops)
            # watch out: these are chunked and cat'd in reverse so A is matched to B in the global crops dino loss
            teacher_cls_tokens = torch.cat((teacher_cls_tokens[1], teacher_cls_tokens[0]))
            ibot_teacher_patch_tokens = teacher_backbone_output_dict["x_norm_patchtokens"]
            _dim = ibot_teacher_patch_tokens.shape[-1]
            buffer_tensor_teacher = ibot_teacher_patch_tokens.new_zeros(upperbound, _dim)
            torch.index_select(ibot_teacher_patch_tokens.flatten(0, 1), dim=0, index=mask_indices_list,
                               out=buffer_tensor_teacher[:n_masked_patches])
            teacher_cls_tokens_after_head = self.teacher.dino_head(teacher_cls_tokens)
            masked_teacher_patch_tokens_after_head = self.teacher.dino_head(buffer_tensor_teacher)[:n_masked_patches]

            teacher_dino_softmaxed_centered_list = self.dino_loss.softmax_center_teacher(
                teacher_cls_tokens_after_head, teacher_temp=teacher_temp
            ).view(n_global_crops, -1, *teacher_cls_tokens_after_head.shape[1:])
            self.dino_loss.update_center(teacher_cls_tokens_after_head)
            masked_teacher_ibot_softmaxed_centered = self.dino_loss.sinkhorn_knopp_teacher(
                masked_teacher_patch_tokens_after_head, teacher_temp=teacher_temp
            )
            return teacher_dino_softmaxed_centered_list, masked_teacher_ibot_softmaxed_centered

        teacher_dino_softmaxed_centered_list, masked_teacher_ibot_softmaxed_centered = get_teacher_output()

        loss_accumulator = 0  # for backprop
        student_global_backbone_output_dict = self.student.backbone(global_crops, masks=masks)
        student_global_cls_tokens = student_global_backbone_output_dict["x_norm_clstoken"]

        _dim = student_global_cls_tokens.shape[-1]
        ibot_student_patch_tokens = student_global_backbone_output_dict["x_norm_patchtokens"]
        buffer_tensor_patch_tokens = ibot_student_patch_tokens.new_zeros(upperbound, _dim)
        buffer_tensor_patch_tokens[:n_masked_patches].copy_(
            torch.index_select(ibot_student_patch_tokens.flatten(0, 1), dim=0, index=mask_indices_list)
        )
        student_global_cls_tokens_after_head = self.student.dino_head(student_global_cls_tokens)
        student_global_masked_patch_tokens_after_head = self.student.dino_head(buffer_tensor_patch_tokens)[:n_masked_patches]

        dino_global_crops_loss = self.dino_loss(
            student_output_list=[student_global_cls_tokens_after_head],
            teacher_out_softmaxed_centered_list=[teacher_dino_softmaxed_centered_list.flatten(0, 1)],
        )
        loss_accumulator += dino_global_crops_loss

        koleo_loss = 0.1 * sum(self.koleo_loss(p) for p in student_global_cls_tokens.chunk(2))
        loss_accumulator += koleo_loss

        ibot_patch_loss = -torch.sum(
            masked_teacher_ibot_softmaxed_centered
            * F.log_softmax(student_global_masked_patch_tokens_after_head / 0.1, dim=-1), dim=-1
        ).mean()
        loss_accumulator += self.ibot_loss_weight * ibot_patch_loss

        loss_accumulator.backward()
        return {"dino": dino_global_crops_loss, "koleo": koleo_loss, "ibot": ibot_patch_loss}

    def update_teacher(self, m):
        student_param_list = []
        teacher_param_list = []
        with torch.no_grad():
            for k in self.student.keys():
                student_param_list += list(self.student[k].parameters())
                teacher_param_list += list(self.teacher[k].parameters())
            torch._foreach_mul_(teacher_param_list, m)
            torch._foreach_add_(teacher_param_list, student_param_list, alpha=1 - m)


model = SSLMetaArch()
optimizer = torch.optim.AdamW([p for p in model.student.parameters()], lr=1e-4)
for it in range(2):
    global_crops = torch.rand(4, 3, 8, 8)  # 2 global crops x 2 images
    masks = torch.rand(4, 4) > 0.5
    optimizer.zero_grad(set_to_none=True)
    loss_dict = model.forward_backward(global_crops, masks, teacher_temp=0.04)
    optimizer.step()
    model.update_teacher(0.992)
print({k: round(float(v), 4) for k, v in loss_dict.items()})
