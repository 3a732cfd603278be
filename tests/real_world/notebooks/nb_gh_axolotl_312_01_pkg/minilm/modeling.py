from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


@dataclass
class MiniLMConfig:
    vocab_size: int = 40
    hidden_size: int = 16
    num_layers: int = 2
    num_heads: int = 2


class DecoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.norm1 = nn.LayerNorm(cfg.hidden_size)
        self.attn = nn.MultiheadAttention(cfg.hidden_size, cfg.num_heads, batch_first=True)
        self.norm2 = nn.LayerNorm(cfg.hidden_size)
        self.up = nn.Linear(cfg.hidden_size, 4 * cfg.hidden_size)
        self.down = nn.Linear(4 * cfg.hidden_size, cfg.hidden_size)

    def forward(self, h):
        s = h.shape[1]
        mask = torch.triu(torch.ones(s, s, dtype=torch.bool), 1)
        x = self.norm1(h)
        h = h + self.attn(x, x, x, attn_mask=mask, need_weights=False)[0]
        return h + self.down(F.gelu(self.up(self.norm2(h))))


class MiniLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.config = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.num_layers))
        self.norm = nn.LayerNorm(cfg.hidden_size)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        self.gradient_checkpointing = False

    def get_input_embeddings(self):
        return self.embed_tokens

    def enable_input_require_grads(self):
        def hook(module, inputs, output):
            output.requires_grad_(True)
        return self.get_input_embeddings().register_forward_hook(hook)

    def gradient_checkpointing_enable(self):
        self.gradient_checkpointing = True

    def forward(self, input_ids=None, inputs_embeds=None):
        h = self.embed_tokens(input_ids) if inputs_embeds is None else inputs_embeds
        for layer in self.layers:
            h = checkpoint(layer, h, use_reentrant=True) if self.gradient_checkpointing and self.training else layer(h)
        return self.lm_head(self.norm(h))
