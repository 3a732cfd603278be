import torch
import torch.nn.functional as F


class AmpEngine:
    def __init__(self, model, device, lr=1e-3):
        self.model, self.device = model.to(device), device
        self.use_amp = device.type == "cuda"
        self.opt = torch.optim.AdamW(model.parameters(), lr=lr)
        self.scaler = torch.amp.GradScaler(device.type, enabled=self.use_amp)

    def step(self, x, y_cls, y_reg):
        with torch.autocast(self.device.type, dtype=torch.float16, enabled=self.use_amp):
            logits, value = self.model(x)
        losses = [F.cross_entropy(logits.float(), y_cls), F.mse_loss(value.float(), y_reg)]
        self.opt.zero_grad()
        for i, loss in enumerate(losses):
            self.scaler.scale(loss).backward(retain_graph=i < len(losses) - 1)
            self.scaler.step(self.opt)
            self.scaler.update()
        return [l.item() for l in losses]
