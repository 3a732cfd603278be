import torch

from src.seq2seq import TinySeq2Seq, label_smoothed_nll_loss
from src.seq2seq.data import toy_batch


def main(steps=3, pad=0):
    torch.manual_seed(0)
    model = TinySeq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(steps):
        src, tgt = toy_batch(step, pad=pad)
        lprobs = torch.log_softmax(model(src), dim=-1)
        loss, nll = label_smoothed_nll_loss(lprobs.view(-1, lprobs.shape[-1]), tgt.view(-1), 0.1, ignore_index=pad)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, loss.item(), nll.item())


if __name__ == "__main__":
    main()
