import torch
import torch.nn as nn

torch.manual_seed(0)


class GRU(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers=1):
        super().__init__()
        self.num_layers = num_layers
        self.hidden_size = hidden_size
        self.layers = nn.ModuleList(
            nn.GRUCell(input_size if i == 0 else hidden_size, hidden_size) for i in range(num_layers))

    def forward(self, x, hx=None):
        if hx is None:
            zeros = torch.zeros(self.num_layers, 1, x.size(1), self.hidden_size)
            hx = zeros.unbind(0)
        else:
            hx = hx.unsqueeze(1).unbind(0)
        hx = [(hx[idx].squeeze(0)) for idx in range(self.num_layers)]
        outputs = []
        for x_t in x.unbind(0):
            for idx, cell in enumerate(self.layers):
                hx[idx] = cell(x_t, hx[idx])
                x_t = hx[idx]
            outputs.append(x_t)
        return torch.stack(outputs), torch.stack(hx)


class KWSModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fake_quant_2 = nn.Linear(4, 6)
        self.kws_predictor_rnn = GRU(5, 6, num_layers=2)
        self.head = nn.Linear(6, 2)

    def forward(self, feats, h0_in):
        h0 = self.fake_quant_2(h0_in)
        out, h = self.kws_predictor_rnn(feats, h0)
        return self.head(out[-1])


model = KWSModel()
feats = torch.randn(3, 2, 5)
h0_in = torch.randn(2, 2, 4)
loss = model(feats, h0_in).sum()
loss.backward()
