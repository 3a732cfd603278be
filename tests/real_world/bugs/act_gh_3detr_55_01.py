import torch
from torch import nn

torch.manual_seed(0)

ACTIVATION_DICT = {"relu": nn.ReLU, "gelu": nn.GELU}


class TransformerEncoderLayer(nn.Module):
    def __init__(self, d_model, nhead=2, dim_feedforward=16, dropout=0.1, dropout_attn=None,
                 activation="relu", normalize_before=True, use_ffn=True):
        super().__init__()
        if dropout_attn is None:
            dropout_attn = dropout
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout_attn)
        self.use_ffn = use_ffn
        if self.use_ffn:
            self.linear1 = nn.Linear(d_model, dim_feedforward)
            self.dropout = nn.Dropout(dropout, inplace=True)
            self.linear2 = nn.Linear(dim_feedforward, d_model)
            self.norm2 = nn.LayerNorm(d_model)
            self.dropout2 = nn.Dropout(dropout, inplace=True)
        self.norm1 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout, inplace=True)
        self.activation = ACTIVATION_DICT[activation]()
        self.normalize_before = normalize_before

    def forward_pre(self, src, pos=None):
        src2 = self.norm1(src)
        q = k = src2 if pos is None else src2 + pos
        src2 = self.self_attn(q, k, value=src2)[0]
        src = src + self.dropout1(src2)
        if self.use_ffn:
            src2 = self.norm2(src)
            src2 = self.linear2(self.dropout(self.activation(self.linear1(src2))))
            src = src + self.dropout2(src2)
        return src

    def forward(self, src, pos=None):
        return self.forward_pre(src, pos)


encoder = nn.Sequential(TransformerEncoderLayer(8), TransformerEncoderLayer(8))
encoder.train()
opt = torch.optim.AdamW(encoder.parameters(), lr=1e-4)
src = torch.randn(5, 2, 8)
for _ in range(2):
    opt.zero_grad()
    loss = encoder(src).pow(2).mean()
    loss.backward()
    opt.step()
