import builtins

import torch

torch.manual_seed(0)


def convert_to_tensor(x, dtype=None):
    if isinstance(x, torch.Tensor):
        return x if dtype is None else x.to(dtype)
    return torch.as_tensor(x, dtype=dtype)


def slice_update(inputs, start_indices, updates):
    inputs = convert_to_tensor(inputs)
    start_indices = convert_to_tensor(start_indices).tolist()
    updates = convert_to_tensor(updates)
    python_slice = builtins.slice
    slices = [
        python_slice(start_index, start_index + update_length)
        for start_index, update_length in zip(start_indices, updates.shape)
    ]
    inputs[tuple(slices)] = updates
    return inputs


class Variable:
    """Stand-in for a trainable keras Variable backed by a torch Parameter."""

    def __init__(self, value):
        self.value = torch.nn.Parameter(convert_to_tensor(value, torch.float32))


kernel = Variable(torch.zeros(4, 4))
cache = slice_update(kernel.value, [1, 1], torch.ones(2, 2))
cache.sum().backward()
