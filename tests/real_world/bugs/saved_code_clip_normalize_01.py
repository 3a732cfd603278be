import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyCLIP(nn.Module):
    def __init__(self, dim=16, vocab=30):
        super().__init__()
        self.visual = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.image_proj = nn.Parameter(torch.randn(8, dim) * 0.1)
        self.token_embedding = nn.Embedding(vocab, dim)
        self.text_proj = nn.Parameter(torch.randn(dim, dim) * 0.1)
        self.logit_scale = nn.Parameter(torch.tensor(2.0))

    def encode_image(self, images):
        return self.visual(images) @ self.image_proj

    def encode_text(self, tokens):
        return self.token_embedding(tokens).mean(1) @ self.text_proj


def contrastive_loss(model, images, texts):
    image_features = model.encode_image(images)
    text_features = model.encode_text(texts)
    image_features /= image_features.norm(dim=-1, keepdim=True)
    text_features /= text_features.norm(dim=-1, keepdim=True)
    logits = model.logit_scale.exp() * image_features @ text_features.T
    labels = torch.arange(images.size(0))
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2


model = TinyCLIP()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for _ in range(2):
    loss = contrastive_loss(model, torch.randn(4, 3, 9, 9), torch.randint(0, 30, (4, 5)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
