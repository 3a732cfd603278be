import torch
import torch.nn.functional as F

from diffusion.denoiser import Denoiser
from diffusion.schedule import LinearSchedule
from utils import to_preview_

torch.manual_seed(0)
sched = LinearSchedule()
model = Denoiser()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
data = torch.tanh(torch.randn(128, 8))
for step in range(4):
    x0 = data[torch.randint(0, 128, (32,))]
    t = torch.randint(0, sched.steps, (32,))
    noise = torch.randn_like(x0)
    x_t = sched.q_sample(x0, t, noise)
    pred = model(x_t, t)
    if step % 2 == 0:
        preview = to_preview_(x_t)
    loss = F.mse_loss(pred, noise)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("loss", loss.item())
