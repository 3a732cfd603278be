import numpy as np
import torch
import torch.nn.functional as F

np.random.seed(0)
x = torch.tensor(np.random.randn(4, 6, 10, 10), dtype=torch.float32, requires_grad=True)
x = F.relu(x, inplace=True)
x = F.dropout(x, p=0.1, inplace=True)
result = torch.sum(x)
result.backward()
