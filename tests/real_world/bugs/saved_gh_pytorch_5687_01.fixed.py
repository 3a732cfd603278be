import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BasicModule(nn.Module):
    def __init__(self):
        super(BasicModule, self).__init__()
        self.model_name = str(type(self))


class ResidualBlock(nn.Module):
    def __init__(self, ch_in, ch_out, shortcut=None):
        super(ResidualBlock, self).__init__()
        self.left = nn.Sequential(
            nn.Conv2d(ch_in, 16, 3, 1, 1),  # ch_in, ch_out, kernel_size, stride, pad
            nn.ReLU(inplace=True),
            nn.Conv2d(16, ch_out, 3, 1, 1),
            nn.ReLU(inplace=True),
        )
        self.right = shortcut

    def forward(self, x):
        out = self.left(x)
        residual = x if self.right is None else self.right(x)
        out = out + residual
        return F.relu(out, inplace=False)


class ContentWeightedCNN(BasicModule):
    def __init__(self):
        super(ContentWeightedCNN, self).__init__()
        self.model_name = 'ContentWeightedCNN'
        self.encoder = nn.Sequential(
            nn.Conv2d(3, 16, 4, 2, 1),
            nn.ReLU(inplace=True),
            ResidualBlock(16, 16),
            nn.Conv2d(16, 8, 1, 1, 0),
            nn.Sigmoid(),
        )
        self.decoder = nn.Sequential(
            nn.Conv2d(8, 16, 1, 1, 0),
            nn.ReLU(inplace=True),
            ResidualBlock(16, 16),
            nn.ConvTranspose2d(16, 3, 4, 2, 1),
        )

    def forward(self, x):
        return self.decoder(self.encoder(x))


model = ContentWeightedCNN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
criterion = nn.MSELoss()
for step in range(2):
    images = torch.rand(2, 3, 16, 16)
    reconstructed = model(images)
    loss = criterion(reconstructed, images)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
