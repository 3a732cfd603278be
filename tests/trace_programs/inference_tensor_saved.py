# expect-kind: torch-error
# expect-error: Inference tensors cannot be saved for backward
import torch

w = torch.rand(3, requires_grad=True)
with torch.inference_mode():
    scale = torch.rand(3)
(w * scale).sum().backward()  # expect: raised
