import random
import torch
import torch.nn as nn

torch.manual_seed(0)
random.seed(0)


class ImagePool():
    """This class implements an image buffer that stores previously generated images.

    This buffer enables us to update discriminators using a history of generated images
    rather than the ones produced by the latest generators.
    """

    def __init__(self, pool_size):
        self.pool_size = pool_size
        if self.pool_size > 0:  # create an empty pool
            self.num_imgs = 0
            self.images = []

    def query(self, images):
        if self.pool_size == 0:  # if the buffer size is 0, do nothing
            return images
        return_images = []
        for image in images:
            image = torch.unsqueeze(image.data, 0)
            if self.num_imgs < self.pool_size:   # if the buffer is not full; keep inserting current images to the buffer
                self.num_imgs = self.num_imgs + 1
                self.images.append(image)
                return_images.append(image)
            else:
                p = random.uniform(0, 1)
                if p > 0.5:  # by 50% chance, the buffer will return a previously stored image, and insert the current image into the buffer
                    random_id = random.randint(0, self.pool_size - 1)  # randint is inclusive
                    tmp = self.images[random_id].clone()
                    self.images[random_id] = image
                    return_images.append(tmp)
                else:       # by another 50% chance, the buffer will return the current image
                    return_images.append(image)
        return_images = torch.cat(return_images, 0)   # collect all the images and return
        return return_images


netG_A = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(True), nn.Conv2d(4, 3, 3, padding=1), nn.Tanh())
netD_B = nn.Sequential(nn.Conv2d(3, 4, 4, 2, 1), nn.LeakyReLU(0.2, True), nn.Conv2d(4, 1, 3, padding=1))
criterionGAN = nn.MSELoss()
optimizer_G = torch.optim.Adam(netG_A.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizer_D = torch.optim.Adam(netD_B.parameters(), lr=2e-4, betas=(0.5, 0.999))
fake_B_pool = ImagePool(2)


def backward_D_basic(netD, real, fake):
    # Real
    pred_real = netD(real)
    loss_D_real = criterionGAN(pred_real, torch.ones_like(pred_real))
    # Fake
    pred_fake = netD(fake.detach())
    loss_D_fake = criterionGAN(pred_fake, torch.zeros_like(pred_fake))
    # Combined loss and calculate gradients
    loss_D = (loss_D_real + loss_D_fake) * 0.5
    loss_D.backward()
    return loss_D


for i in range(4):
    real_A, real_B = torch.rand(2, 3, 8, 8), torch.rand(2, 3, 8, 8)
    fake_B = netG_A(real_A)
    # G_A
    optimizer_G.zero_grad()
    pred = netD_B(fake_B)
    loss_G_A = criterionGAN(pred, torch.ones_like(pred))
    loss_G_A.backward()
    optimizer_G.step()
    # D_B
    optimizer_D.zero_grad()
    fake_B_pooled = fake_B_pool.query(fake_B)
    backward_D_basic(netD_B, real_B, fake_B_pooled)
    optimizer_D.step()
