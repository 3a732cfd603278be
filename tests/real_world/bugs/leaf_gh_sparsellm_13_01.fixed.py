import torch

torch.manual_seed(0)


def update_s(s, W, Y, s_learning_rate=0.01, chunk_size=2, iters=3):
    for start in range(0, s.shape[1], chunk_size):
        chunk = slice(start, start + chunk_size)
        s_batch = s[:, chunk].float().clone().requires_grad_(True)
        for _ in range(iters):
            loss_s = ((W @ s_batch - Y[:, chunk]) ** 2).sum()
            loss_s.backward()
            with torch.no_grad():
                s_batch -= s_learning_rate * s_batch.grad
            s_batch.grad.zero_()
        s[:, chunk] = s_batch.detach().to(dtype=torch.float16)
    return s


W = torch.randn(6, 5)
Y = torch.randn(6, 4)
s = torch.randn(5, 4).half()
update_s(s, W, Y)
