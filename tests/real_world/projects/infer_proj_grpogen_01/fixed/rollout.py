import torch


@torch.no_grad()
def sample_group(model, prompt, group=4, new_tokens=5):
    ids = prompt.repeat(group, 1)
    for _ in range(new_tokens):
        probs = torch.softmax(model(ids)[:, -1], dim=-1)
        ids = torch.cat([ids, torch.multinomial(probs, 1)], dim=1)
    return ids
