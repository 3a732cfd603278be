import torch
import torch.nn as nn

from data import make_loader
from losses import focal_loss
from models import Backbone, HeatmapHead


def main():
    torch.manual_seed(0)
    model = nn.Sequential(Backbone(), HeatmapHead())
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for x, y in make_loader():
            hm = model(x)
            loss = focal_loss(hm, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
