import torch

torch.manual_seed(0)
rnn = torch.nn.RNN(input_size=2, hidden_size=5, num_layers=2)
batch_first = False


def forward(x, hx=None):
    if batch_first:
        x = x.transpose(0, 1)
    seq_len, batch_size, _ = x.size()
    if hx is None:
        hx = torch.zeros(rnn.num_layers, batch_size, rnn.hidden_size)
    h_t_minus_1 = hx.clone()
    h_t = hx.clone()
    output = []
    for t in range(seq_len):
        for layer in range(rnn.num_layers):
            input_t = x[t] if layer == 0 else h_t[layer - 1]
            h_t[layer] = torch.tanh(
                input_t @ getattr(rnn, f"weight_ih_l{layer}").T
                + getattr(rnn, f"bias_ih_l{layer}")
                + h_t_minus_1[layer] @ getattr(rnn, f"weight_hh_l{layer}").T
                + getattr(rnn, f"bias_hh_l{layer}")
            )
        output.append(h_t[-1].clone())
        h_t_minus_1 = h_t.clone()
    output = torch.stack(output)
    if batch_first:
        output = output.transpose(0, 1)
    return output, h_t


out, h = forward(torch.randn(4, 3, 2))
out.sum().backward()
