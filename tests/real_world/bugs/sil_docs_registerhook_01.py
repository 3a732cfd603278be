import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class NodeClassifier(nn.Module):
    def __init__(self, adj, n_feats=5, dim=8, n_classes=3, frozen=None):
        super().__init__()
        self.adj = adj
        self.feat_proj = nn.Linear(n_feats, dim)
        self.node_emb = nn.Parameter(torch.randn(adj.size(0), dim) * 0.1)
        self.out = nn.Linear(dim, n_classes)
        self.trainable_mask = torch.ones(adj.size(0), 1)
        if frozen is not None:
            self.trainable_mask[frozen] = 0.0
            self.node_emb.register_hook(lambda grad: grad.mul_(self.trainable_mask))

    def forward(self, feats):
        h = self.feat_proj(feats) + self.node_emb
        return self.out(torch.relu(self.adj @ h))


def train_step(model, feats, labels):
    model.zero_grad()
    F.cross_entropy(model(feats), labels).backward()
    return model.feat_proj.weight.grad.clone()


N = 6
adj = torch.eye(N) + torch.diag(torch.ones(N - 1), 1) + torch.diag(torch.ones(N - 1), -1)
adj = adj / adj.sum(1, keepdim=True)
feats, labels = torch.randn(N, 5), torch.randint(0, 3, (N,))
model = NodeClassifier(adj, frozen=torch.tensor([0, 1, 2]))
grad = train_step(model, feats, labels)

# the gradient the freezing means: only the embedding rows are masked, the feature projection keeps its gradient
model.zero_grad()
h = model.feat_proj(feats) + model.node_emb.detach().requires_grad_()
F.cross_entropy(model.out(torch.relu(adj @ h)), labels).backward()
if not torch.allclose(grad, model.feat_proj.weight.grad):
    print("wrong gradient: the in-place mask hook also zeroed part of the feature projection's gradient")
else:
    print("gradient ok")
