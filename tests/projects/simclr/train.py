import torch

from data import batches
from losses import nt_xent
from models import Encoder, ProjectionHead


def main():
    torch.manual_seed(0)
    encoder = Encoder()
    head = ProjectionHead()
    opt = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.1)
    for x1, x2 in batches():
        z1 = head(encoder(x1))
        z2 = head(encoder(x2))
        loss = nt_xent(z1, z2)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(loss.item())


if __name__ == "__main__":
    main()
