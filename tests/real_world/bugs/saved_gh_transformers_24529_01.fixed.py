import torch
from torch import nn

torch.manual_seed(0)


class OwlViTClassPredictionHead(nn.Module):
    def __init__(self, hidden_size=8, query_dim=6):
        super().__init__()
        self.dense0 = nn.Linear(hidden_size, query_dim)
        self.logit_shift = nn.Linear(hidden_size, 1)
        self.logit_scale = nn.Linear(hidden_size, 1)
        self.elu = nn.ELU()

    def forward(self, image_embeds, query_embeds, query_mask=None):
        image_class_embeds = self.dense0(image_embeds)

        # Normalize image and text features
        image_class_embeds = image_class_embeds / (torch.linalg.norm(image_class_embeds, dim=-1, keepdim=True) + 1e-6)
        query_embeds = query_embeds / (torch.linalg.norm(query_embeds, dim=-1, keepdim=True) + 1e-6)

        pred_logits = torch.einsum("...pd,...qd->...pq", image_class_embeds, query_embeds)
        logit_shift = self.logit_shift(image_embeds)
        logit_scale = self.elu(self.logit_scale(image_embeds)) + 1
        pred_logits = (pred_logits + logit_shift) * logit_scale
        return pred_logits, image_class_embeds


head = OwlViTClassPredictionHead()
text_proj = nn.Linear(5, 6)
image_embeds = torch.randn(2, 4, 8)
query_embeds = text_proj(torch.randn(2, 3, 5))
pred_logits, _ = head(image_embeds, query_embeds)
pred_logits.sum().backward()
