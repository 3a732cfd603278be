# A DataLoader with worker processes (forked on Linux): the workers inherit the tracer and must neither
# change the batches nor write a report of their own.
import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        x = torch.full((3,), i / 16)
        x.mul_(x)  # an in-place op in the worker
        return x, torch.tensor([float(i)])


if __name__ == "__main__":
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        total = 0.0
        for x, y in DataLoader(Squares(), batch_size=4, num_workers=2):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            total += loss.item()
        print("epoch", epoch, round(total, 4))
