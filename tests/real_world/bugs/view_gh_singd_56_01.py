"""SINGD with a model that uses in-place activations."""
import torch
from torch import rand
from torch.nn import Conv2d, Linear, ReLU, Sequential

torch.manual_seed(0)


class SINGD(torch.optim.SGD):
    def __init__(self, model, lr=0.01):
        super().__init__(model.parameters(), lr=lr)
        self.inputs, self.grad_outputs = {}, {}
        for name, module in model.named_modules():
            if isinstance(module, (Conv2d, Linear)):
                module.register_forward_pre_hook(self._save_input)
                module.register_full_backward_hook(self._save_grad_output)

    def _save_input(self, module, inputs):
        self.inputs[module] = inputs[0].detach()

    def _save_grad_output(self, module, grad_input, grad_output):
        self.grad_outputs[module] = grad_output[0].detach()


TRIGGER_BUG = True

model = Sequential(
    Conv2d(1, 1, 3),
    ReLU(inplace=TRIGGER_BUG),
)
optim = SINGD(model)  # install hooks

batch_size = 2
X = rand(2, 1, 5, 5)

output = model(X)
output.sum().backward()
optim.step()
