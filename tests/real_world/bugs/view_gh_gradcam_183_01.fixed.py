import torch
import torch.nn as nn

torch.manual_seed(0)


class ActivationsAndGradients:
    """ Class for extracting activations and
    registering gradients from targeted intermediate layers """

    def __init__(self, model, target_layers):
        self.model = model
        self.gradients = []
        self.activations = []
        self.handles = []
        for target_layer in target_layers:
            self.handles.append(target_layer.register_forward_hook(self.save_activation))

    def save_activation(self, module, input, output):
        self.activations.append(output.cpu().detach())
        # Gradients are computed in reverse order: register a tensor hook on the output instead of a module hook
        output.register_hook(lambda grad: self.save_gradient(module, None, (grad,)))

    def save_gradient(self, module, grad_input, grad_output):
        self.gradients = [grad_output[0].cpu().detach()] + self.gradients

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)

    def release(self):
        for handle in self.handles:
            handle.remove()


class Bottleneck(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.bn1(self.conv1(x))
        out += x
        return self.relu(out)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.layer4 = nn.Sequential(Bottleneck(4), Bottleneck(4))
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        x = self.layer4(self.stem(x))
        return self.fc(x.mean((2, 3)))


model = Net()
cam = ActivationsAndGradients(model, [model.layer4[-1].bn1])
output = cam(torch.randn(1, 3, 6, 6))
output[0, output.argmax()].backward()
print(len(cam.gradients))
