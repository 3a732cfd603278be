import torch


@torch.inference_mode()
def generate(attn, prompt, steps=3):
    out = attn(prompt, start_pos=0)
    pos = prompt.shape[1]
    for _ in range(steps):
        nxt = attn(out[:, -1:], start_pos=pos)
        out = torch.cat([out, nxt], dim=1)
        pos += 1
    return out
