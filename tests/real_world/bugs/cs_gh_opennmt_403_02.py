import torch
import torch.nn as nn

torch.manual_seed(0)


class DecoderState(object):
    def detach(self):
        for h in self._all:
            h.detach()


class RNNDecoderState(DecoderState):
    def __init__(self, hidden_size, rnnstate):
        self.hidden = rnnstate
        batch_size = self.hidden[0].size(1)
        self.input_feed = torch.zeros(1, batch_size, hidden_size)

    @property
    def _all(self):
        return self.hidden + (self.input_feed,)


class NMTModel(nn.Module):
    def __init__(self, vocab=12, hidden=8):
        super(NMTModel, self).__init__()
        self.embeddings = nn.Embedding(vocab, hidden)
        self.encoder = nn.LSTM(hidden, hidden)
        self.decoder = nn.LSTM(2 * hidden, hidden)
        self.generator = nn.Linear(hidden, vocab)
        self.hidden = hidden

    def forward(self, src, tgt, dec_state=None):
        memory_bank, enc_final = self.encoder(self.embeddings(src))
        enc_state = RNNDecoderState(self.hidden, enc_final) if dec_state is None else dec_state
        outputs = []
        hidden, input_feed = enc_state.hidden, enc_state.input_feed
        for emb_t in self.embeddings(tgt).split(1):
            dec_out, hidden = self.decoder(torch.cat([emb_t, input_feed], 2), hidden)
            input_feed = dec_out
            outputs.append(dec_out)
        enc_state.hidden, enc_state.input_feed = hidden, input_feed
        return torch.cat(outputs), None, enc_state


class Trainer(object):
    def __init__(self, model, optim, trunc_size=2):
        self.model, self.optim, self.trunc_size = model, optim, trunc_size
        self.criterion = nn.CrossEntropyLoss()

    def train_loss(self, outputs, tgt):
        scores = self.model.generator(outputs)
        return self.criterion(scores.view(-1, scores.size(-1)), tgt.view(-1))

    def train(self, train_iter, epoch):
        for i, batch in enumerate(train_iter):
            src, tgt_outer = batch
            target_size = tgt_outer.size(0)
            trunc_size = self.trunc_size
            dec_state = None
            for j in range(0, target_size - 1, trunc_size):
                tgt = tgt_outer[j: j + trunc_size]
                self.model.zero_grad()
                outputs, attns, dec_state = self.model(src, tgt, dec_state)
                loss = self.train_loss(outputs, tgt)
                loss.backward(retain_graph=True)
                self.optim.step()

                # If truncated, don't backprop fully.
                if dec_state is not None:
                    dec_state.detach()


model = NMTModel()
trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=1.0))
train_iter = [(torch.randint(0, 12, (4, 2)), torch.randint(0, 12, (7, 2)))]
trainer.train(train_iter, epoch=1)
