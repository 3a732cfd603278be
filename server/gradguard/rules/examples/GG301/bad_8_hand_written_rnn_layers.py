import torch

torch.manual_seed(0)
rnn = torch.nn.RNN(input_size=2, hidden_size=5, num_layers=2)


def forward(x):
    seq_len, batch_size, _ = x.size()
    h_prev = torch.zeros(rnn.num_layers, batch_size, rnn.hidden_size)
    h = h_prev.clone()
    for t in range(seq_len):
        for layer in range(rnn.num_layers):
            inp = x[t] if layer == 0 else h[layer - 1]
            h[layer] = torch.tanh(  # <- GG301
                inp @ getattr(rnn, f"weight_ih_l{layer}").T + getattr(rnn, f"bias_ih_l{layer}")
                + h_prev[layer] @ getattr(rnn, f"weight_hh_l{layer}").T + getattr(rnn, f"bias_hh_l{layer}")
            )
        h_prev = h.clone()
    return h


forward(torch.randn(4, 3, 2)).sum().backward()
