import torch

torch.manual_seed(0)

rnn = torch.nn.RNN(input_size=2, hidden_size=5, num_layers=2)
weight_ih = [rnn.weight_ih_l0, rnn.weight_ih_l1]
bias_ih = [rnn.bias_ih_l0, rnn.bias_ih_l1]
weight_hh = [rnn.weight_hh_l0, rnn.weight_hh_l1]
bias_hh = [rnn.bias_hh_l0, rnn.bias_hh_l1]


def forward(x, h_0=None, num_layers=2, hidden_size=5):
    seq_len, batch_size, _ = x.size()
    if h_0 is None:
        h_0 = torch.zeros(num_layers, batch_size, hidden_size)
    h_t_minus_1 = list(h_0)
    output = []
    for t in range(seq_len):
        h_t = []
        for layer in range(num_layers):
            input_t = x[t] if layer == 0 else h_t[layer - 1]
            h_t.append(torch.tanh(
                input_t @ weight_ih[layer].T + bias_ih[layer] + h_t_minus_1[layer] @ weight_hh[layer].T + bias_hh[layer]
            ))
        output.append(h_t[-1])
        h_t_minus_1 = h_t
    output = torch.stack(output)
    return output, torch.stack(h_t)


opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
for _ in range(2):
    out, h = forward(torch.randn(4, 3, 2))
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
