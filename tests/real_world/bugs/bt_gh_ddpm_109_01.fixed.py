import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Unet1D(nn.Module):
    def __init__(self, dim=4, channels=2):
        super().__init__()
        self.inp = nn.Conv1d(channels, dim, 3, padding=1)
        self.out = nn.Conv1d(dim, channels, 3, padding=1)

    def forward(self, x, t):
        return self.out(F.silu(self.inp(x) + t.view(-1, 1, 1)))


class GaussianDiffusion1D(nn.Module):
    def __init__(self, model, seq_length=8, timesteps=10):
        super().__init__()
        self.model, self.num_timesteps = model, timesteps
        betas = torch.linspace(1e-4, 0.02, timesteps)
        self.register_buffer('sqrt_alphas_cumprod', torch.sqrt(torch.cumprod(1 - betas, 0)))
        self.register_buffer('sqrt_one_minus_alphas_cumprod', torch.sqrt(1 - torch.cumprod(1 - betas, 0)))

    def forward(self, img):
        t = torch.randint(0, self.num_timesteps, (img.shape[0],))
        noise = torch.randn_like(img)
        x = self.sqrt_alphas_cumprod[t].view(-1, 1, 1) * img + self.sqrt_one_minus_alphas_cumprod[t].view(-1, 1, 1) * noise
        return F.mse_loss(self.model(x, t.float() / self.num_timesteps), noise)


class Trainer1D(object):
    def __init__(self, diffusion_model, dataset, train_batch_size=2, train_lr=1e-4, train_num_steps=3):
        self.model = diffusion_model
        self.ds = dataset
        self.batch_size, self.train_num_steps = train_batch_size, train_num_steps
        self.opt = torch.optim.Adam(diffusion_model.parameters(), lr=train_lr)

    def train(self):
        for step in range(self.train_num_steps):
            idx = torch.randint(0, self.ds.size(0), (self.batch_size,))
            data = self.ds[idx]
            loss = self.model(data)
            loss.backward()
            self.opt.step()
            self.opt.zero_grad()


raw = torch.randn(6, 3, 8)
# convert my data to the network's input shape, outside the training loop
to_input = nn.Conv1d(3, 2, 1)
with torch.no_grad():
    training_seq = to_input(raw)

model = Unet1D(dim=4, channels=2)
diffusion = GaussianDiffusion1D(model, seq_length=8, timesteps=10)
trainer = Trainer1D(diffusion, dataset=training_seq)
trainer.train()
