import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)

'''
Main train script (reduced: a random check-in dataset instead of Gowalla).
'''


class Setting:
    hidden_dim = 8
    batch_size = 3
    sequence_length = 4
    learning_rate = 0.01
    weight_decay = 0.0
    epochs = 1
    lambda_t = 0.1
    lambda_s = 100
    is_lstm = False
    device = torch.device('cpu')


class Flashback(nn.Module):
    def __init__(self, input_size, user_count, hidden_size, f_t, f_s):
        super().__init__()
        self.input_size = input_size
        self.user_count = user_count
        self.hidden_size = hidden_size
        self.f_t = f_t  # function for computing temporal weight
        self.f_s = f_s  # function for computing spatial weight
        self.encoder = nn.Embedding(input_size, hidden_size)  # location embedding
        self.user_encoder = nn.Embedding(user_count, hidden_size)  # user embedding
        self.rnn = nn.RNN(hidden_size, hidden_size)
        self.fc = nn.Linear(2 * hidden_size, input_size)  # create outputs in lenght of locations

    def forward(self, x, t, s, y_t, y_s, h, active_user):
        seq_len, user_len = x.size()
        x_emb = self.encoder(x)
        out, h = self.rnn(x_emb, h)

        # comopute weights per user
        out_w = torch.zeros(seq_len, user_len, self.hidden_size, device=x.device)
        for i in range(seq_len):
            sum_w = torch.zeros(user_len, 1, device=x.device)
            for j in range(i + 1):
                dist_t = t[i] - t[j]
                dist_s = torch.norm(s[i] - s[j], dim=-1)
                a_j = self.f_t(dist_t, user_len)
                b_j = self.f_s(dist_s, user_len)
                a_j = a_j.unsqueeze(1)
                b_j = b_j.unsqueeze(1)
                w_j = a_j * b_j + 1e-10  # small epsilon to avoid 0 division
                sum_w += w_j
                out_w[i] += w_j * out[j]
            # normliaze according to weights
            out_w[i] /= sum_w

        # add user embedding:
        p_u = self.user_encoder(active_user)
        p_u = p_u.view(user_len, self.hidden_size)
        out_pu = torch.zeros(seq_len, user_len, 2 * self.hidden_size, device=x.device)
        for i in range(seq_len):
            out_pu[i] = torch.cat([out_w[i], p_u], dim=1)
        y_linear = self.fc(out_pu)
        return y_linear, h


class FixNoiseStrategy():
    ''' use fixed normal noise as initialization '''

    def __init__(self, hidden_size):
        self.hidden_size = hidden_size
        mu = 0
        sd = 1 / self.hidden_size
        self.h0 = torch.randn(self.hidden_size, requires_grad=False) * sd + mu

    def on_init(self, user_len, device):
        hs = []
        for i in range(user_len):
            hs.append(self.h0)
        return torch.stack(hs, dim=0).view(1, user_len, self.hidden_size).to(device)

    def on_reset(self, user):
        return self.h0


class FlashbackTrainer():
    def __init__(self, lambda_t, lambda_s):
        self.lambda_t = lambda_t
        self.lambda_s = lambda_s

    def parameters(self):
        return self.model.parameters()

    def prepare(self, loc_count, user_count, hidden_size, device):
        f_t = lambda delta_t, user_len: ((torch.cos(delta_t * 2 * np.pi / 86400) + 1) / 2) * torch.exp(-(delta_t / 86400 * self.lambda_t))  # hover cosine + exp decay
        f_s = lambda delta_s, user_len: torch.exp(-(delta_s * self.lambda_s))  # exp decay
        self.loc_count = loc_count
        self.cross_entropy_loss = nn.CrossEntropyLoss()
        self.model = Flashback(loc_count, user_count, hidden_size, f_t, f_s).to(device)

    def loss(self, x, t, s, y, y_t, y_s, h, active_users):
        self.model.train()
        out, h = self.model(x, t, s, y_t, y_s, h, active_users)
        out = out.view(-1, self.loc_count)
        y = y.view(-1)
        l = self.cross_entropy_loss(out, y)
        return l, h


def make_batches(n_batches, seq_len, user_len, loc_count):
    batches = []
    for b in range(n_batches):
        x = torch.randint(0, loc_count, (1, seq_len, user_len))
        t = torch.cumsum(torch.rand(1, seq_len, user_len) * 3600, dim=1)
        s = torch.rand(1, seq_len, user_len, 2) * 0.01
        y = torch.randint(0, loc_count, (1, seq_len, user_len))
        reset_h = [torch.tensor([b == 0]) for _ in range(user_len)]
        active_users = torch.arange(user_len).view(1, user_len)
        batches.append((x, t, s, y, t, s, reset_h, active_users))
    return batches


setting = Setting()
loc_count, user_count = 10, 3
dataloader = make_batches(3, setting.sequence_length, setting.batch_size, loc_count)

trainer = FlashbackTrainer(setting.lambda_t, setting.lambda_s)
h0_strategy = FixNoiseStrategy(setting.hidden_dim)
trainer.prepare(loc_count, user_count, setting.hidden_dim, setting.device)

optimizer = torch.optim.Adam(trainer.parameters(), lr=setting.learning_rate, weight_decay=setting.weight_decay)

for e in range(setting.epochs):
    h = h0_strategy.on_init(setting.batch_size, setting.device)
    losses = []
    for i, (x, t, s, y, y_t, y_s, reset_h, active_users) in enumerate(dataloader):
        # reset hidden states for newly added users
        for j, reset in enumerate(reset_h):
            if reset:
                h[0, j] = h0_strategy.on_reset(active_users[0][j])

        x = x.squeeze().to(setting.device)
        t = t.squeeze().to(setting.device)
        s = s.squeeze().to(setting.device)
        y = y.squeeze().to(setting.device)
        y_t = y_t.squeeze().to(setting.device)
        y_s = y_s.squeeze().to(setting.device)
        active_users = active_users.to(setting.device)

        optimizer.zero_grad()
        loss, h = trainer.loss(x, t, s, y, y_t, y_s, h, active_users)
        loss.backward(retain_graph=True)
        losses.append(loss.item())
        optimizer.step()
        h = h.detach()
    print(f'Epoch: {e + 1}/{setting.epochs}', f'Avg Loss: {np.mean(losses)}')
