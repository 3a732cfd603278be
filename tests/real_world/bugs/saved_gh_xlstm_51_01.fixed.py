from dataclasses import dataclass, field

import torch
from torch import nn

torch.manual_seed(0)


@dataclass
class CausalConv1dConfig:
    feature_dim: int = None  # F
    kernel_size: int = 4
    causal_conv_bias: bool = True
    channel_mixing: bool = False
    conv1d_kwargs: dict = field(default_factory=dict)


def conv1d_step(
    x: torch.Tensor,
    conv_state: torch.Tensor,
    conv1d_weight: torch.Tensor,
    conv1d_bias: torch.Tensor = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """
    B: batch size
    S: sequence length
    D: feature dimension
    KS: kernel size
    Args:
        x (torch.Tensor): (B, S, D)
        conv_state (torch.Tensor): (B, KS, D)
        conv1d_weight (torch.Tensor): (KS, D)
    """
    assert x.shape[0] == conv_state.shape[0]
    assert x.shape[2] == conv_state.shape[2]
    assert x.shape[1] == 1, f"x has sequence length {x.shape[1]} but it should be 1"
    conv_state = torch.cat([torch.roll(conv_state, shifts=-1, dims=1)[:, :-1, :], x], dim=1)
    y = torch.sum(conv_state * conv1d_weight, dim=1, keepdim=True)
    if conv1d_bias is not None:
        y += conv1d_bias
    return y, conv_state


class CausalConv1d(nn.Module):
    def __init__(self, config: CausalConv1dConfig):
        super().__init__()
        self.config = config
        self.groups = self.config.feature_dim
        self.pad = self.config.kernel_size - 1  # padding of this size assures temporal causality.
        self.conv = nn.Conv1d(
            in_channels=self.config.feature_dim,
            out_channels=self.config.feature_dim,
            kernel_size=self.config.kernel_size,
            padding=self.pad,
            groups=self.groups,
            bias=self.config.causal_conv_bias,
        )

    def step(self, x, conv_state=None):
        B, S, D = x.shape
        if conv_state is None:
            conv_state = (torch.zeros(size=(B, self.config.kernel_size, D), device=x.device, dtype=x.dtype),)
        y, conv_state = conv1d_step(
            x,
            conv_state[0],
            self.conv.weight[:, 0, :].transpose(0, 1),  # rearrange(, "D 1 KS -> KS D")
            conv1d_bias=self.conv.bias if self.config.causal_conv_bias else None,
        )
        return y, (conv_state,)


class StepLM(nn.Module):
    def __init__(self, vocab_size=11, embedding_dim=8):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, embedding_dim)
        self.conv1d = CausalConv1d(CausalConv1dConfig(feature_dim=embedding_dim, kernel_size=4))
        self.lm_head = nn.Linear(embedding_dim, vocab_size)

    def step(self, idx, state=None):
        x = self.token_embedding(idx)  # (B, 1, D)
        x_conv, state = self.conv1d.step(x, conv_state=state)
        x_conv = nn.functional.silu(x_conv)
        return self.lm_head(x_conv), state


model = StepLM()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
tokens = torch.randint(0, 11, (2, 6))
state = None
loss = 0.0
for t in range(tokens.shape[1] - 1):
    logits, state = model.step(tokens[:, t:t + 1], state)
    loss = loss + nn.functional.cross_entropy(logits[:, 0], tokens[:, t + 1])
optimizer.zero_grad()
loss.backward()
optimizer.step()
