import torch
import torch.nn as nn

torch.manual_seed(0)


def dispatch_clip_grad(parameters, value: float, mode: str = 'norm', norm_type: float = 2.0):
    if mode == 'norm':
        torch.nn.utils.clip_grad_norm_(parameters, value, norm_type=norm_type)
    elif mode == 'value':
        torch.nn.utils.clip_grad_value_(parameters, value)
    else:
        assert False, f"Unknown clip mode ({mode})."


class NativeScaler:
    state_dict_key = "amp_scaler"

    def __init__(self, device='cpu'):
        self._scaler = torch.amp.GradScaler(device)

    def __call__(self, loss, optimizer, clip_grad=None, clip_mode='norm', parameters=None, create_graph=False, need_update=True):
        self._scaler.scale(loss).backward(create_graph=create_graph)
        if need_update:
            if clip_grad is not None:
                assert parameters is not None
                self._scaler.unscale_(optimizer)  # unscale the gradients of optimizer's assigned params in-place
                dispatch_clip_grad(parameters, clip_grad, mode=clip_mode)
            self._scaler.step(optimizer)
            self._scaler.update()

    def state_dict(self):
        return self._scaler.state_dict()


def train_one_epoch(epoch, model, loader, optimizer, loss_fn, loss_scaler=None, accum_steps=2, clip_grad=1.0):
    model.train()
    last_accum_steps = len(loader) % accum_steps
    updates_per_epoch = (len(loader) + accum_steps - 1) // accum_steps
    last_batch_idx = len(loader) - 1
    optimizer.zero_grad()
    for batch_idx, (input, target) in enumerate(loader):
        last_batch = batch_idx == last_batch_idx
        need_update = last_batch or (batch_idx + 1) % accum_steps == 0

        with torch.autocast('cpu', dtype=torch.bfloat16):
            output = model(input)
            loss = loss_fn(output.float(), target)
        if accum_steps > 1:
            loss /= accum_steps

        loss_scaler(loss, optimizer, clip_grad=clip_grad, clip_mode='norm', parameters=model.parameters(), need_update=need_update)
        if need_update:
            optimizer.zero_grad()


model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.rand(2, 3, 6, 6), torch.randint(0, 5, (2,))) for _ in range(3)]
train_one_epoch(0, model, loader, optimizer, nn.CrossEntropyLoss(), loss_scaler=NativeScaler())
