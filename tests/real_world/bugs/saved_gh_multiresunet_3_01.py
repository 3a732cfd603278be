import torch

torch.manual_seed(0)


class Conv2d_batchnorm(torch.nn.Module):
    def __init__(self, num_in_filters, num_out_filters, kernel_size, stride=(1, 1), activation='relu'):
        super().__init__()
        self.activation = activation
        self.conv1 = torch.nn.Conv2d(num_in_filters, num_out_filters, kernel_size=kernel_size, stride=stride, padding='same')
        self.batchnorm = torch.nn.BatchNorm2d(num_out_filters)

    def forward(self, x):
        x = self.conv1(x)
        x = self.batchnorm(x)
        if self.activation == 'relu':
            return torch.nn.functional.relu(x)
        return x


class Respath(torch.nn.Module):
    def __init__(self, num_in_filters, num_out_filters, respath_length):
        super().__init__()
        self.respath_length = respath_length
        self.shortcuts = torch.nn.ModuleList([])
        self.convs = torch.nn.ModuleList([])
        self.bns = torch.nn.ModuleList([])
        for i in range(self.respath_length):
            if i == 0:
                self.shortcuts.append(Conv2d_batchnorm(num_in_filters, num_out_filters, kernel_size=(1, 1), activation='None'))
                self.convs.append(Conv2d_batchnorm(num_in_filters, num_out_filters, kernel_size=(3, 3), activation='relu'))
            else:
                self.shortcuts.append(Conv2d_batchnorm(num_out_filters, num_out_filters, kernel_size=(1, 1), activation='None'))
                self.convs.append(Conv2d_batchnorm(num_out_filters, num_out_filters, kernel_size=(3, 3), activation='relu'))
            self.bns.append(torch.nn.BatchNorm2d(num_out_filters))

    def forward(self, x):
        for i in range(self.respath_length):
            shortcut = self.shortcuts[i](x)
            x = self.convs[i](x)
            x = self.bns[i](x)
            x = torch.nn.functional.relu(x)
            x += shortcut
            x = self.bns[i](x)
            x = torch.nn.functional.relu(x)
        return x


respath = Respath(3, 4, respath_length=2)
out = respath(torch.randn(2, 3, 8, 8))
out.mean().backward()
