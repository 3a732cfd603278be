import torch

from trainer import MultiTaskTrainer

torch.manual_seed(0)
trainer = MultiTaskTrainer()
x = torch.randn(16, 10)
seg_t, depth_t = torch.randint(0, 3, (16,)), torch.rand(16)
for step in range(2):
    trainer.step(x, seg_t, depth_t)
print("done")
