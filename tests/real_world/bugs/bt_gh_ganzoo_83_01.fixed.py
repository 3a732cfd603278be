import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def GDPPLoss(phiFake, phiReal, backward=True):
    def compute_diversity(phi):
        phi = F.normalize(phi, p=2, dim=1)
        SB = torch.mm(phi, phi.t())
        eigVals, eigVecs = torch.linalg.eigh(SB)
        return eigVals, eigVecs

    def normalize_min_max(eigVals):
        minV, maxV = torch.min(eigVals), torch.max(eigVals)
        if abs(minV - maxV) < 1e-10:
            return eigVals
        return (eigVals - minV) / (maxV - minV)

    fakeEigVals, fakeEigVecs = compute_diversity(phiFake)
    realEigVals, realEigVecs = compute_diversity(phiReal)

    # Scaling factor to make the two losses operating in comparable ranges.
    magnitudeLoss = 0.0001 * F.mse_loss(target=realEigVals, input=fakeEigVals)
    structureLoss = -torch.sum(torch.mul(fakeEigVecs, realEigVecs), 0)
    normalizedRealEigVals = normalize_min_max(realEigVals)
    weightedStructureLoss = torch.sum(torch.mul(normalizedRealEigVals, structureLoss))
    gdppLoss = magnitudeLoss + weightedStructureLoss

    if backward:
        gdppLoss.backward(retain_graph=True)

    return gdppLoss.item()


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(6, 5), nn.LeakyReLU(0.2))
        self.decision = nn.Linear(5, 1)

    def forward(self, x, getFeature=False):
        feature = self.features(x)
        out = self.decision(feature)
        if getFeature:
            return out, feature
        return out


class BaseGAN():
    def __init__(self, GDPP=True):
        self.netG = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6))
        self.netD = Discriminator()
        self.optimizerG = torch.optim.Adam(self.netG.parameters(), lr=1e-3, betas=(0.0, 0.99))
        self.optimizerD = torch.optim.Adam(self.netD.parameters(), lr=1e-3, betas=(0.0, 0.99))
        self.GDPP = GDPP

    def buildNoiseData(self, n):
        return torch.randn(n, 4)

    def optimizeParameters(self, input_batch):
        self.real_input = input_batch
        n_samples = self.real_input.size(0)

        # Update the discriminator
        self.optimizerD.zero_grad()
        predRealD = self.netD(self.real_input, False)
        lossD = F.softplus(-predRealD).mean()
        inputLatent = self.buildNoiseData(n_samples)
        predFakeG = self.netG(inputLatent).detach()
        predFakeD = self.netD(predFakeG, False)
        lossD += F.softplus(predFakeD).mean()
        lossD.backward(retain_graph=True)
        self.optimizerD.step()

        # Update the generator
        self.optimizerG.zero_grad()
        self.optimizerD.zero_grad()

        # #1 Image generation
        inputNoise = self.buildNoiseData(n_samples)
        predFakeG = self.netG(inputNoise)

        # #2 Status evaluation
        predFakeD, phiGFake = self.netD(predFakeG, True)

        # #2 Loss
        lossGFake = F.softplus(-predFakeD).mean()
        lossGFake.backward(retain_graph=True)

        if self.GDPP:
            _, phiDReal = self.netD.forward(self.real_input, True)
            GDPPLoss(phiGFake, phiDReal.detach())

        self.optimizerG.step()


model = BaseGAN(GDPP=True)
for _ in range(2):
    model.optimizeParameters(torch.randn(5, 6))
