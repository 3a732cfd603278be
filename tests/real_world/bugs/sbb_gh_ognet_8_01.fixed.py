import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


def gaussian(ins, is_training, mean, stddev):
    if is_training:
        noise = ins.data.new(ins.size()).normal_(mean, stddev)
        return ins + noise
    return ins


class OGNet(object):
    def __init__(self, batch_size=2, epoch=1, sigma_noise=0.9, adversarial_training_factor=0.5):
        self.g = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 3, padding=1), nn.Tanh())
        self.d = nn.Sequential(nn.Conv2d(1, 4, 4, 2, 1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(4 * 4 * 4, 1), nn.Sigmoid())
        self.batch_size, self.epoch, self.sigma_noise = batch_size, epoch, sigma_noise
        self.adversarial_training_factor = adversarial_training_factor
        self.g_learning_rate = self.d_learning_rate = 0.001
        self.dataloader = [(torch.rand(batch_size, 1, 8, 8), None) for _ in range(2)]

    def train(self, normal_class):
        self.g.train()
        self.d.train()

        # Set optimizators
        g_optim = optim.Adam(self.g.parameters(), lr=self.g_learning_rate)
        d_optim = optim.Adam(self.d.parameters(), lr=self.d_learning_rate)

        fake = torch.ones([self.batch_size], dtype=torch.float32)
        valid = torch.zeros([self.batch_size], dtype=torch.float32)
        for num_epoch in range(self.epoch):
            for i, data in enumerate(self.dataloader):
                input, gt_label = data
                g_optim.zero_grad()
                sigma = self.sigma_noise ** 2
                input_w_noise = gaussian(input, 1, 0, sigma)  # Noise
                # Inference from generator
                g_output = self.g(input_w_noise)

                ##############################################
                # zero_grad -> backward -> step for G first, on the current D
                d_fake_output = self.d(g_output)
                g_recon_loss = nn.functional.mse_loss(g_output, input)
                g_adversarial_loss = nn.functional.binary_cross_entropy(d_fake_output.squeeze(), valid)
                g_sum_loss = (1 - self.adversarial_training_factor) * g_recon_loss + self.adversarial_training_factor * g_adversarial_loss
                g_sum_loss.backward()
                g_optim.step()

                ##############################################
                d_optim.zero_grad()
                d_fake_output = self.d(g_output.detach())
                d_real_output = self.d(input)
                d_fake_loss = nn.functional.binary_cross_entropy(torch.squeeze(d_fake_output), fake)
                d_real_loss = nn.functional.binary_cross_entropy(torch.squeeze(d_real_output), valid)
                d_sum_loss = 0.5 * (d_fake_loss + d_real_loss)
                d_sum_loss.backward()
                d_optim.step()


OGNet().train(normal_class=0)
