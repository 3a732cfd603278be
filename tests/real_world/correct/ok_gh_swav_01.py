import torch
import torch.nn as nn

torch.manual_seed(31)


class Args:
    epsilon = 0.05
    sinkhorn_iterations = 3
    temperature = 0.1
    crops_for_assign = [0, 1]
    nmb_crops = [2]
    freeze_prototypes_niters = 1


args = Args()


class SwAVModel(nn.Module):
    def __init__(self, output_dim=8, nmb_prototypes=5):
        super().__init__()
        self.projection_head = nn.Sequential(nn.Linear(12, 16), nn.BatchNorm1d(16), nn.ReLU(inplace=True), nn.Linear(16, output_dim))
        self.prototypes = nn.Linear(output_dim, nmb_prototypes, bias=False)

    def forward(self, inputs):
        x = self.projection_head(torch.cat(inputs))
        x = nn.functional.normalize(x, dim=1, p=2)
        return x, self.prototypes(x)


@torch.no_grad()
def distributed_sinkhorn(out):
    Q = torch.exp(out / args.epsilon).t()  # Q is K-by-B for consistency with notations from our paper
    B = Q.shape[1]  # number of samples to assign
    K = Q.shape[0]  # how many prototypes

    # make the matrix sums to 1
    sum_Q = torch.sum(Q)
    Q /= sum_Q

    for it in range(args.sinkhorn_iterations):
        # normalize each row: total weight per prototype must be 1/K
        sum_of_rows = torch.sum(Q, dim=1, keepdim=True)
        Q /= sum_of_rows
        Q /= K

        # normalize each column: total weight per sample must be 1/B
        Q /= torch.sum(Q, dim=0, keepdim=True)
        Q /= B

    Q *= B  # the colomns must sum to 1 so that Q is an assignment
    return Q.t()


def train(train_loader, model, optimizer, epoch):
    model.train()
    for it, inputs in enumerate(train_loader):
        iteration = epoch * len(train_loader) + it

        # normalize the prototypes
        with torch.no_grad():
            w = model.prototypes.weight.data.clone()
            w = nn.functional.normalize(w, dim=1, p=2)
            model.prototypes.weight.copy_(w)

        # ============ multi-res forward passes ... ============
        embedding, output = model(inputs)
        embedding = embedding.detach()
        bs = inputs[0].size(0)

        # ============ swav loss ... ============
        loss = 0
        for i, crop_id in enumerate(args.crops_for_assign):
            with torch.no_grad():
                out = output[bs * crop_id: bs * (crop_id + 1)].detach()
                # get assignments
                q = distributed_sinkhorn(out)[-bs:]

            # cluster assignment prediction
            subloss = 0
            for v in [v for v in range(sum(args.nmb_crops)) if v != crop_id]:
                x = output[bs * v: bs * (v + 1)] / args.temperature
                subloss -= torch.mean(torch.sum(q * nn.functional.log_softmax(x, dim=1), dim=1))
            loss += subloss / (sum(args.nmb_crops) - 1)
        loss /= len(args.crops_for_assign)

        # ============ backward and optim step ... ============
        optimizer.zero_grad()
        loss.backward()
        # cancel gradients for the prototypes
        if iteration < args.freeze_prototypes_niters:
            for name, p in model.named_parameters():
                if "prototypes" in name:
                    p.grad = None
        optimizer.step()


model = SwAVModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loader = [[torch.randn(4, 12), torch.randn(4, 12)] for _ in range(2)]
train(loader, model, optimizer, epoch=0)
