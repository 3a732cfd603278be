import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ChildSumTreeLSTM(nn.Module):
    def __init__(self, in_dim, mem_dim):
        super().__init__()
        self.ioux = nn.Linear(in_dim, 3 * mem_dim)
        self.mem_dim = mem_dim

    def forward(self, inputs):
        iou = self.ioux(inputs)
        i, o, u = torch.split(iou, iou.size(1) // 3, dim=1)
        c = torch.sigmoid(i) * torch.tanh(u)
        return torch.sigmoid(o) * torch.tanh(c)


class SimilarityTreeLSTM(nn.Module):
    def __init__(self, vocab_size, in_dim, mem_dim, num_classes, sparsity, freeze, emb):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, in_dim, padding_idx=0, sparse=sparsity)
        if freeze:
            self.emb.weight.requires_grad = False
        self.emb.weight.copy_(emb)
        self.childsumtreelstm = ChildSumTreeLSTM(in_dim, mem_dim)
        self.similarity = nn.Linear(2 * mem_dim, num_classes)

    def forward(self, linputs, rinputs):
        linputs, rinputs = self.emb(linputs), self.emb(rinputs)
        lstate, rstate = self.childsumtreelstm(linputs), self.childsumtreelstm(rinputs)
        return F.log_softmax(self.similarity(torch.cat([lstate, rstate], dim=1)), dim=1)


emb = torch.randn(20, 6)
model = SimilarityTreeLSTM(20, 6, 4, 5, sparsity=False, freeze=False, emb=emb)
optimizer = torch.optim.Adagrad(model.parameters(), lr=0.01)
output = model(torch.randint(0, 20, (3,)), torch.randint(0, 20, (3,)))
loss = F.kl_div(output, torch.full((3, 5), 0.2), reduction="batchmean")
loss.backward()
optimizer.step()
