import torch


def refresh_prototypes(model, support_x, support_y):
    with torch.no_grad():
        z = model.embed(support_x)
        protos = torch.stack([z[support_y == c].mean(0) for c in range(model.prototypes.shape[0])])
    model.prototypes = protos
    return protos
