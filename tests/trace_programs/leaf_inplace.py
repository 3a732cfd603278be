import torch  # expect-kind: torch-error; expect-error: a leaf Variable that requires grad is being used in an in-place operation
w = torch.rand(4, requires_grad=True)
w += 1  # expect: raised
loss = w.sum()
loss.backward()
