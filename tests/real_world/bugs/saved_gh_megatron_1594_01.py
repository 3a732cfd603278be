from typing import Tuple

import torch

torch.manual_seed(0)


class VocabParallelCrossEntropy:
    @staticmethod
    def calculate_logits_max(vocab_parallel_logits: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """Calculates logits_max."""
        vocab_parallel_logits = vocab_parallel_logits.float()
        logits_max = torch.max(vocab_parallel_logits, dim=-1)[0]
        return vocab_parallel_logits, logits_max

    @staticmethod
    def calculate_predicted_logits(vocab_parallel_logits, target, logits_max):
        vocab_parallel_logits -= logits_max.unsqueeze(dim=-1)
        logits_2d = vocab_parallel_logits.view(-1, vocab_parallel_logits.size(-1))
        arange_1d = torch.arange(start=0, end=logits_2d.size()[0])
        predicted_logits = logits_2d[arange_1d, target.view(-1)].clone().view_as(target)
        exp_logits = vocab_parallel_logits
        torch.exp(vocab_parallel_logits, out=exp_logits)
        sum_exp_logits = exp_logits.sum(dim=-1)
        return predicted_logits, sum_exp_logits, exp_logits


class _VocabParallelCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, vocab_parallel_logits, target):
        vocab_parallel_logits, logits_max = VocabParallelCrossEntropy.calculate_logits_max(vocab_parallel_logits)
        predicted_logits, sum_exp_logits, exp_logits = VocabParallelCrossEntropy.calculate_predicted_logits(
            vocab_parallel_logits, target, logits_max)
        loss = torch.log(sum_exp_logits) - predicted_logits
        exp_logits.div_(sum_exp_logits.unsqueeze(dim=-1))
        ctx.save_for_backward(exp_logits, target)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        softmax, target = ctx.saved_tensors
        grad_input = softmax.clone()
        grad_2d = grad_input.view(-1, grad_input.size(-1))
        arange_1d = torch.arange(start=0, end=grad_2d.size()[0])
        grad_2d[arange_1d, target.view(-1)] -= 1.0
        grad_input.mul_(grad_output.unsqueeze(dim=-1))
        return grad_input, None


def vocab_parallel_cross_entropy(vocab_parallel_logits, target):
    return _VocabParallelCrossEntropy.apply(vocab_parallel_logits, target)


def loss_func(logits, labels, z_loss_coeff=1e-4):
    z_loss = torch.logsumexp(logits, dim=-1).pow(2).mean()
    ce = vocab_parallel_cross_entropy(logits, labels).mean()
    return ce + z_loss_coeff * z_loss


output_layer = torch.nn.Linear(6, 10)
hidden = torch.randn(2, 3, 6)
logits = output_layer(hidden)
loss = loss_func(logits, torch.randint(0, 10, (2, 3)))
loss.backward()
