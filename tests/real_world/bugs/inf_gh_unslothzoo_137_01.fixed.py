import torch
import torch.nn as nn

torch.manual_seed(0)


class CausalLM(nn.Module):
    def __init__(self, vocab=10, dim=6):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids):
        return self.lm_head(self.embed_tokens(input_ids))

    def resize_token_embeddings(self, new_num_tokens):
        old_embed, old_head = self.embed_tokens, self.lm_head
        n_old = old_embed.num_embeddings
        self.embed_tokens = nn.Embedding(new_num_tokens, old_embed.embedding_dim)
        self.embed_tokens.weight.data[:n_old] = old_embed.weight.data
        self.lm_head = nn.Linear(old_embed.embedding_dim, new_num_tokens, bias=False)
        self.lm_head.weight.data[:n_old] = old_head.weight.data


@torch.no_grad()
def add_new_tokens(model, vocab, new_tokens):
    old_length = len(vocab)
    vocab.extend(new_tokens)
    model.resize_token_embeddings(len(vocab))
    mean_embedding = model.embed_tokens.weight[:old_length].mean(0)
    model.embed_tokens.weight[old_length:] = mean_embedding
    model.lm_head.weight[old_length:] = model.lm_head.weight[:old_length].mean(0)


model = CausalLM()
vocab = [f"tok{i}" for i in range(10)]
add_new_tokens(model, vocab, new_tokens=[f"<NEW_TOKEN_{i}>" for i in range(4)])

optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
input_ids = torch.randint(0, 14, (2, 5))
for step in range(2):
    logits = model(input_ids[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, 14), input_ids[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
