import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class EdgeGenerator(nn.Module):
    def __init__(self):
        super(EdgeGenerator, self).__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(True))
        self.decoder = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, x):
        return torch.sigmoid(self.decoder(self.encoder(x)))


class Discriminator(nn.Module):
    def __init__(self, in_channels):
        super(Discriminator, self).__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(in_channels, 8, 4, stride=2, padding=1), nn.LeakyReLU(0.2, inplace=True))
        self.conv2 = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, x):
        conv1 = self.conv1(x)
        conv2 = self.conv2(conv1)
        return torch.sigmoid(conv2), [conv1, conv2]


class EdgeModel(nn.Module):
    def __init__(self):
        super(EdgeModel, self).__init__()
        self.generator = EdgeGenerator()
        self.discriminator = Discriminator(in_channels=2)
        self.adversarial_loss = nn.BCELoss()
        self.l1_loss = nn.L1Loss()
        self.gen_optimizer = optim.Adam(params=self.generator.parameters(), lr=1e-4, betas=(0.0, 0.9))
        self.dis_optimizer = optim.Adam(params=self.discriminator.parameters(), lr=1e-5, betas=(0.0, 0.9))

    def process(self, images, edges, masks):
        # zero optimizers
        self.gen_optimizer.zero_grad()
        self.dis_optimizer.zero_grad()

        # process outputs
        outputs = self(images, edges, masks)
        gen_loss = 0
        dis_loss = 0

        # discriminator loss
        dis_input_real = torch.cat((images[:, :1], edges), dim=1)
        dis_input_fake = torch.cat((images[:, :1], outputs.detach()), dim=1)
        dis_real, dis_real_feat = self.discriminator(dis_input_real)
        dis_fake, dis_fake_feat = self.discriminator(dis_input_fake)
        dis_real_loss = self.adversarial_loss(dis_real, torch.ones_like(dis_real))
        dis_fake_loss = self.adversarial_loss(dis_fake, torch.zeros_like(dis_fake))
        dis_loss += (dis_real_loss + dis_fake_loss) / 2

        # generator adversarial loss
        gen_input_fake = torch.cat((images[:, :1], outputs), dim=1)
        gen_fake, gen_fake_feat = self.discriminator(gen_input_fake)
        gen_gan_loss = self.adversarial_loss(gen_fake, torch.ones_like(gen_fake))
        gen_loss += gen_gan_loss

        # generator feature matching loss
        gen_fm_loss = 0
        for i in range(len(dis_real_feat)):
            gen_fm_loss += self.l1_loss(gen_fake_feat[i], dis_real_feat[i].detach())
        gen_loss += gen_fm_loss * 10

        return outputs, gen_loss, dis_loss

    def forward(self, images, edges, masks):
        edges_masked = (edges * (1 - masks))
        images_masked = (images * (1 - masks)) + masks
        inputs = torch.cat((images_masked[:, :1], edges_masked, masks), dim=1)
        return self.generator(inputs)

    def backward(self, gen_loss=None, dis_loss=None):
        if dis_loss is not None:
            dis_loss.backward()
        self.dis_optimizer.step()

        if gen_loss is not None:
            gen_loss.backward()
        self.gen_optimizer.step()


edge_model = EdgeModel()
for _ in range(2):
    images, edges, masks = torch.rand(2, 3, 8, 8), torch.rand(2, 1, 8, 8), (torch.rand(2, 1, 8, 8) > 0.5).float()
    outputs, gen_loss, dis_loss = edge_model.process(images, edges, masks)
    edge_model.backward(gen_loss, dis_loss)
