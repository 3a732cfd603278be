import torch

torch.manual_seed(0)


class AttentionBackend:
    """Reuses a lazily allocated workspace across forward calls."""

    def __init__(self, num_heads, head_dim):
        self.num_heads = num_heads
        self.head_dim = head_dim
        self.workspace = None

    def _get_workspace(self, q):
        if self.workspace is None:
            self.workspace = torch.zeros(q.shape[0], self.num_heads, self.head_dim)
        return self.workspace

    def forward(self, q, k, v):
        ws = self._get_workspace(q)
        scores = torch.softmax(q @ k.transpose(-1, -2) / self.head_dim ** 0.5, dim=-1)
        ws.copy_(scores @ v)
        return ws


class ModelRunner:
    def __init__(self, backend):
        self.attn_backend = backend

    def autotune_warmup(self, q, k, v):
        with torch.no_grad():
            self.attn_backend.forward(q, k, v)

    def forward(self, q, k, v):
        return self.attn_backend.forward(q, k, v)


runner = ModelRunner(AttentionBackend(num_heads=2, head_dim=4))
q, k, v = torch.randn(3, 2, 4), torch.randn(3, 2, 4), torch.randn(3, 2, 4)
runner.autotune_warmup(q, k, v)
out = runner.forward(q, k, v)
print(out.shape)
