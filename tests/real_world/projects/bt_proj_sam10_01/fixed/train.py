import torch

from net import chexnet_head
from sam import SAM
from tasks import get_loss, make_batch

torch.manual_seed(0)
model = chexnet_head()
optimizer = SAM(model.parameters(), torch.optim.SGD, lr=0.1, momentum=0.9)
image, target = make_batch()
for epoch in range(2):
    output = model(image)
    loss = sum(get_loss(output, target, t) for t in range(3))
    optimizer.zero_grad()
    loss.backward()
    optimizer.first_step(zero_grad=True)
    output = model(image)
    loss = sum(get_loss(output, target, t) for t in range(3))
    loss.backward()
    optimizer.second_step(zero_grad=True)
    print(epoch, loss.item())
