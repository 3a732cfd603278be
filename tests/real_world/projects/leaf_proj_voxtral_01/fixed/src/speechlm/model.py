import torch.nn as nn


class SpeechLM(nn.Module):
    def __init__(self, vocab=32, dim=16, audio_dim=10, audio_token_id=3):
        super().__init__()
        self.audio_token_id = audio_token_id
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.audio_proj = nn.Linear(audio_dim, dim)
        self.body = nn.GRU(dim, dim, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, audio_features):
        inputs_embeds = self.embed_tokens(input_ids)
        audio_embeds = self.audio_proj(audio_features)
        audio_mask = input_ids == self.audio_token_id
        inputs_embeds = inputs_embeds.masked_scatter(audio_mask[..., None], audio_embeds)
        hidden, _ = self.body(inputs_embeds)
        return self.lm_head(hidden)
