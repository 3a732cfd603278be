import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def Linear(in_features, out_features, bias=True, dropout=0.0):
    m = nn.Linear(in_features, out_features, bias=bias)
    m.weight.data.uniform_(-0.1, 0.1)
    if bias:
        m.bias.data.uniform_(-0.1, 0.1)
    return m


class AttentionLayer(nn.Module):
    def __init__(self, input_embed_dim, source_embed_dim, output_embed_dim, bias=False):
        super().__init__()
        self.input_proj = Linear(input_embed_dim, source_embed_dim, bias=bias)
        self.output_proj = Linear(input_embed_dim + source_embed_dim, output_embed_dim, bias=bias)

    def forward(self, input, source_hids, encoder_padding_mask):
        x = self.input_proj(input)
        attn_scores = (source_hids * x.unsqueeze(0)).sum(dim=2)
        if encoder_padding_mask is not None:
            attn_scores = attn_scores.float().masked_fill_(encoder_padding_mask, float("-inf")).type_as(attn_scores)
        attn_scores = F.softmax(attn_scores, dim=0)
        x = (attn_scores.unsqueeze(2) * source_hids).sum(dim=0)
        x = torch.tanh(self.output_proj(torch.cat((x, input), dim=1)))
        return x, attn_scores


attention = AttentionLayer(6, 5, 6)
srclen, bsz = 4, 3
source_hids = torch.randn(srclen, bsz, 5, requires_grad=True)
encoder_padding_mask = torch.tensor([[False] * bsz] * 3 + [[False, True, True]])
input = torch.randn(bsz, 6)
out, attn = attention(input, source_hids, encoder_padding_mask)
out.sum().backward()
