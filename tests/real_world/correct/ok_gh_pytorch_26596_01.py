import torch
import torch.nn as nn

torch.manual_seed(0)


class KGScorer(nn.Module):
    def __init__(self, n_entities=6, dim=5, proj_dim=7):
        super().__init__()
        self.entity = nn.Embedding(n_entities, dim, max_norm=True)
        self.relation_proj = nn.Parameter(torch.randn(proj_dim, dim))

    def forward(self, tail_idx):
        weight = self.entity.weight.clone()
        all_scores = weight @ self.relation_proj.T
        tail_scores = self.entity(tail_idx) @ self.relation_proj.T
        return (all_scores.unsqueeze(0) + tail_scores.unsqueeze(1)).sigmoid()


model = KGScorer()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(2):
    loss = -model(torch.tensor([1, 2])).clamp_min(1e-6).log().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
