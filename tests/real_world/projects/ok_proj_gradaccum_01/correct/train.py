import torch

from gpt.data import get_batch
from gpt.model import TinyGPT


def main(max_iters=3, gradient_accumulation_steps=3, grad_clip=1.0):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    data = torch.randint(0, 32, (500,))
    model = TinyGPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
    X, Y = get_batch(data, g)
    for it in range(max_iters):
        for micro_step in range(gradient_accumulation_steps):
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
            X, Y = get_batch(data, g)
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        print(it, loss.item() * gradient_accumulation_steps)


if __name__ == "__main__":
    main()
