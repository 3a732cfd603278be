import torch as th
import torch.nn as nn

th.manual_seed(0)


class MlpLstmPolicy(nn.Module):
    def __init__(self, obs_dim=4, n_actions=2, hidden=8):
        super().__init__()
        self.lstm_actor = nn.LSTM(obs_dim, hidden)
        self.action_net = nn.Linear(hidden, n_actions)

    def forward(self, obs, lstm_states, episode_starts):
        # one step per call, as in RecurrentPPO: (seq_len=1, n_envs, features)
        h, c = lstm_states
        h = (1.0 - episode_starts).view(1, -1, 1) * h
        c = (1.0 - episode_starts).view(1, -1, 1) * c
        latent, lstm_states = self.lstm_actor(obs.unsqueeze(0), (h, c))
        return th.tanh(self.action_net(latent.squeeze(0))), lstm_states


def train(model, device, train_loader, optimizer, start_lstm_state):
    model.train()
    criterion = nn.MSELoss()
    lstm_states = start_lstm_state
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        episode_starts = th.zeros(data.size(0))
        optimizer.zero_grad()
        action, lstm_states = model(data, lstm_states, episode_starts)
        action_prediction = action.double()
        targeti = target.double()
        loss = criterion(action_prediction.view(-1), targeti.view(-1))
        loss.backward(retain_graph=True)
        optimizer.step()


student_policy = MlpLstmPolicy()
optimizer = th.optim.Adadelta(student_policy.parameters(), lr=1.0)
train_loader = [(th.randn(3, 4), th.randn(3, 2)) for _ in range(3)]
last_lstm_states = (th.zeros(1, 3, 8), th.zeros(1, 3, 8))
for epoch in range(1, 3):
    train(student_policy, "cpu", train_loader, optimizer, last_lstm_states)
