import torch

torch.manual_seed(0)
J = torch.eye(2).unsqueeze(0).expand(5, 2, 2)
for i in range(2):
    J[:, i, :] = torch.randn([5, 2])
print(J)
