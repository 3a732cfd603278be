from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GradientMaskPruner:
    def __init__(self, layers, sparsity=0.5):
        self._params = [layer.weight for layer in layers]
        self._param_masks = []
        for p in self._params:
            threshold = p.detach().abs().flatten().kthvalue(int(sparsity * p.numel())).values
            self._param_masks.append((p.detach().abs() > threshold).float())
        self._gradient_hooks = [None] * len(self._params)

    def _hook_mask_gradient(self, idx, grad):
        return grad.mul_(self._param_masks[idx])

    def _create_hooks(self):
        for idx, param in enumerate(self._params):
            if self._gradient_hooks[idx] is None:
                self._gradient_hooks[idx] = (
                    param.register_hook(partial(self._hook_mask_gradient, idx)) if param.requires_grad else None)


model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 2))
pruner = GradientMaskPruner([model[0], model[3]])
pruner._create_hooks()
x, y = torch.randn(3, 1, 8, 8), torch.tensor([0, 1, 1])
F.cross_entropy(model(x), y).backward()
masked = [model[0].weight.grad.clone(), model[3].weight.grad.clone(), model[3].bias.grad.clone()]

plain = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 2))
plain.load_state_dict(model.state_dict())
F.cross_entropy(plain(x), y).backward()
expected = [plain[0].weight.grad * pruner._param_masks[0], plain[3].weight.grad * pruner._param_masks[1], plain[3].bias.grad]
if not all(torch.allclose(a, b, atol=1e-7) for a, b in zip(masked, expected)):
    print("wrong gradient: the mask hook changed a gradient it does not own")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
opt.step()
