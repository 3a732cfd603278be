import torch

torch.manual_seed(0)
rnn = torch.nn.RNN(input_size=1, hidden_size=1, num_layers=1)
train_x = torch.tensor([[[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]]])
train_y = 2 * train_x
h_cur = torch.zeros(1, 1)
loss_fn = torch.nn.MSELoss()
opt = torch.optim.Adadelta(rnn.parameters(), lr=0.01)
for i in range(5):
    opt.zero_grad()
    out, h_next = rnn(train_x[i], h_cur)
    loss = loss_fn(out, train_y[i])
    loss.backward()
    opt.step()
    h_cur = h_next.detach()
