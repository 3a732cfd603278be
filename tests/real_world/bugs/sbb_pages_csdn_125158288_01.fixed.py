import torch
import torch.nn as nn

torch.manual_seed(0)

G = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 4))
D = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
optimG = torch.optim.Adam(G.parameters(), lr=1e-3)
optimD = torch.optim.Adam(D.parameters(), lr=1e-3)
criterion = nn.BCELoss()

for epoch in range(2):
    t = torch.randn(8, 3)
    real = torch.randn(8, 4)
    g = G(t)
    d = D(g)

    # update D
    lossD = criterion(D(real), torch.ones(8, 1)) + criterion(d, torch.zeros(8, 1))
    optimD.zero_grad()
    lossD.backward()
    optimD.step()

    # update G: rebuild the graph through the updated D
    g = G(t)
    d = D(g)
    lossG = criterion(d, torch.ones(8, 1))
    optimG.zero_grad()
    lossG.backward()
    optimG.step()
