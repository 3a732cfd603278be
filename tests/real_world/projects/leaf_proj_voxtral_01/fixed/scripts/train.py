import torch
import torch.nn.functional as F

from src.speechlm import SpeechLM, enable_input_require_grads, freeze_base

torch.manual_seed(0)
model = SpeechLM()
freeze_base(model)
enable_input_require_grads(model)
opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
ids = torch.randint(4, 32, (2, 12))
ids[:, 1:4] = 3
audio = torch.randn(2, 3, 10)
for step in range(3):
    logits = model(ids, audio)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, 32), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
