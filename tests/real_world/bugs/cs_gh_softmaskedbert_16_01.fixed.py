import torch
import torch.nn as nn

torch.manual_seed(0)


class BertEmbeddings(nn.Module):
    def __init__(self, vocab_size=20, hidden=8):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden)
        self.LayerNorm = nn.LayerNorm(hidden)

    def forward(self, input_ids):
        return self.LayerNorm(self.word_embeddings(input_ids))


class SoftMaskedBert(nn.Module):
    def __init__(self, vocab_size=20, hidden=8, mask_token_id=3):
        super(SoftMaskedBert, self).__init__()
        self.embedding = BertEmbeddings(vocab_size, hidden)
        self.detector = nn.GRU(hidden, hidden // 2, bidirectional=True, batch_first=True)
        self.linear = nn.Linear(hidden, 1)
        self.corrector = nn.Linear(hidden, hidden)
        self.output = nn.Linear(hidden, vocab_size)
        self.mask_e = self.embedding(torch.tensor([[mask_token_id]], dtype=torch.long)).detach()

    def forward(self, input_ids):
        e = self.embedding(input_ids)
        p, _ = self.detector(e)
        p = torch.sigmoid(self.linear(p))
        e_ = p * self.mask_e + (1 - p) * e
        h = self.corrector(e_) + e
        return torch.log_softmax(self.output(h), dim=-1), p


model = SoftMaskedBert()
optimizer = torch.optim.Adam(model.parameters(), lr=2e-5)
criterion_c = nn.NLLLoss()
criterion_d = nn.BCELoss()
gama = 0.8
for step in range(2):
    input_ids = torch.randint(0, 20, (2, 5))
    output_ids = torch.randint(0, 20, (2, 5))
    label = torch.randint(0, 2, (2, 5, 1)).float()
    out, prob = model(input_ids)
    loss = gama * criterion_c(out.transpose(1, 2), output_ids) + (1 - gama) * criterion_d(prob, label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
