import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BahdanauAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.query_layer = nn.Linear(dim, dim, bias=False)
        self.tanh = nn.Tanh()
        self.v = nn.Linear(dim, 1, bias=False)

    def forward(self, query, processed_memory):
        processed_query = self.query_layer(query).unsqueeze(1)
        return self.v(self.tanh(processed_query + processed_memory)).squeeze(-1)


class AttentionWrapper(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.rnn_cell = nn.GRUCell(2 * dim, dim)
        self.attention_mechanism = BahdanauAttention(dim)

    def forward(self, query, attention, cell_state, memory, processed_memory, mask):
        cell_output = self.rnn_cell(torch.cat((query, attention), -1), cell_state)
        energies = self.attention_mechanism(cell_output, processed_memory)
        alignment = F.softmax(energies, dim=-1)
        alignment = alignment.masked_fill(mask, 0.0)
        attention = torch.bmm(alignment.unsqueeze(1), memory).squeeze(1)
        return cell_output, attention, alignment


dim, T = 8, 6
wrapper = AttentionWrapper(dim)
memory_layer = nn.Linear(dim, dim, bias=False)
opt = torch.optim.Adam(list(wrapper.parameters()) + list(memory_layer.parameters()), lr=1e-3)
memory = torch.randn(2, T, dim)
memory_lengths = torch.tensor([6, 4])
mask = torch.arange(T)[None, :] >= memory_lengths[:, None]
for _ in range(2):
    processed_memory = memory_layer(memory)
    query, attention, cell = torch.zeros(2, dim), torch.zeros(2, dim), torch.zeros(2, dim)
    outputs = []
    for t in range(3):
        cell, attention, alignment = wrapper(query, attention, cell, memory, processed_memory, mask)
        outputs.append(attention)
        query = attention
    loss = torch.stack(outputs).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
