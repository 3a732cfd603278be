import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class OwlViTClassPredictionHead(nn.Module):
    def __init__(self, dim=16, query_dim=12):
        super().__init__()
        self.dense0 = nn.Linear(dim, query_dim)
        self.query_proj = nn.Linear(dim, query_dim)
        self.logit_shift = nn.Linear(dim, 1)
        self.logit_scale = nn.Linear(dim, 1)

    def forward(self, image_embeds, query_tokens):
        image_class_embeds = self.dense0(image_embeds)
        image_class_embeds = image_class_embeds / (torch.linalg.norm(image_class_embeds, dim=-1, keepdim=True) + 1e-6)
        query_embeds = self.query_proj(query_tokens)
        query_embeds = query_embeds / (torch.linalg.norm(query_embeds, dim=-1, keepdim=True) + 1e-6)
        pred_logits = torch.einsum("...pd,...qd->...pq", image_class_embeds, query_embeds)
        logit_shift = self.logit_shift(image_embeds)
        logit_scale = F.elu(self.logit_scale(image_embeds)) + 1
        return (pred_logits + logit_shift) * logit_scale


head = OwlViTClassPredictionHead()
opt = torch.optim.AdamW(head.parameters(), lr=1e-4)
for _ in range(2):
    logits = head(torch.randn(2, 9, 16), torch.randn(2, 3, 16))
    loss = F.binary_cross_entropy_with_logits(logits, (torch.rand(2, 9, 3) > 0.8).float())
    opt.zero_grad()
    loss.backward()
    opt.step()
