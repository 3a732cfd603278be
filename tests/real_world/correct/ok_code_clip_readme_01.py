import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyCLIP(nn.Module):
    def __init__(self, dim=16, vocab=30):
        super().__init__()
        self.visual = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                    nn.Linear(8, dim))
        self.token_embedding = nn.Embedding(vocab, dim)

    def encode_image(self, images):
        return self.visual(images)

    def encode_text(self, tokens):
        return self.token_embedding(tokens).mean(1)


def zero_shot_features(model, images, texts):
    with torch.no_grad():
        image_features = model.encode_image(images)
        text_features = model.encode_text(texts)
        image_features /= image_features.norm(dim=-1, keepdim=True)
        text_features /= text_features.norm(dim=-1, keepdim=True)
    return image_features, (100.0 * image_features @ text_features.T).softmax(dim=-1)


model = TinyCLIP()
features, probs = zero_shot_features(model, torch.randn(6, 3, 9, 9), torch.randint(0, 30, (3, 5)))
probe = nn.Linear(16, 3)
opt = torch.optim.SGD(probe.parameters(), lr=0.1)
for _ in range(2):
    loss = F.cross_entropy(probe(features), probs.argmax(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
