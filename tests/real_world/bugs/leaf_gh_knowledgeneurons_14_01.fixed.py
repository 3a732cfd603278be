import torch
import torch.nn as nn

torch.manual_seed(0)


class Output(nn.Module):
    def __init__(self, d_ff, d_model):
        super().__init__()
        self.dense = nn.Linear(d_ff, d_model)


class Layer(nn.Module):
    def __init__(self, d_ff, d_model):
        super().__init__()
        self.output = Output(d_ff, d_model)


class Encoder(nn.Module):
    def __init__(self, n, d_ff, d_model):
        super().__init__()
        self.layer = nn.ModuleList(Layer(d_ff, d_model) for _ in range(n))


class Bert(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder(2, 12, 6)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bert = Bert()


model = Model()
word_embeddings = torch.randn(20, 6)
kn_bag = [[0, 3], [1, 7]]
lambda_list_1 = [1.0, 1.0]
lambda_list_2 = [8.0, 8.0]
ori_pred_emb = word_embeddings[4]
tgt_emb = word_embeddings[9]

for i, (layer, pos) in enumerate(kn_bag):
    with torch.no_grad():
        model.bert.encoder.layer[layer].output.dense.weight[:, pos] -= ori_pred_emb * lambda_list_1[i]
        model.bert.encoder.layer[layer].output.dense.weight[:, pos] += tgt_emb * lambda_list_2[i]
