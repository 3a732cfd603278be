import torch
import torch.nn.functional as F

from lora import LoraEmbedding, prepare_model_for_kbit_training
from model import TinyLM

torch.manual_seed(0)
model = TinyLM()
base = model.embed
model = prepare_model_for_kbit_training(model, base)
model.embed = LoraEmbedding(base)
params = [p for p in model.parameters() if p.requires_grad]
opt = torch.optim.AdamW(params, lr=1e-2)
ids = torch.randint(0, 40, (4, 10))
for step in range(3):
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 40), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
