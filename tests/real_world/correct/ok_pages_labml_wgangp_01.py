import torch
import torch.autograd
import torch.nn as nn

torch.manual_seed(0)


class GradientPenalty(nn.Module):
    """
    * `x` is x ~ P_r
    * `f` is D(x)

    x_hat <- x since we set epsilon = 1 for this implementation.
    """

    def forward(self, x: torch.Tensor, f: torch.Tensor):
        # Get batch size
        batch_size = x.shape[0]

        # Calculate gradients of D(x) with respect to x.
        # `grad_outputs` is set to ones since we want the gradients of D(x),
        # and we need to create and retain graph since we have to compute gradients
        # with respect to weight on this loss.
        gradients, *_ = torch.autograd.grad(outputs=f,
                                            inputs=x,
                                            grad_outputs=f.new_ones(f.shape),
                                            create_graph=True)

        # Reshape gradients to calculate the norm
        gradients = gradients.reshape(batch_size, -1)
        # Calculate the norm
        norm = gradients.norm(2, dim=-1)
        # Return the loss
        return torch.mean((norm - 1) ** 2)


generator = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16))
discriminator = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
gradient_penalty = GradientPenalty()
gradient_penalty_coefficient = 10.0
g_opt = torch.optim.Adam(generator.parameters(), lr=1e-4, betas=(0.5, 0.999))
d_opt = torch.optim.Adam(discriminator.parameters(), lr=1e-4, betas=(0.5, 0.999))

for step in range(3):
    data = torch.randn(8, 16)
    data.requires_grad_()
    latent = torch.randn(8, 8)
    # discriminator step
    logits_true = discriminator(data)
    logits_false = discriminator(generator(latent).detach())
    disc_loss = logits_false.mean() - logits_true.mean()
    gp = gradient_penalty(data, logits_true)
    loss = disc_loss + gradient_penalty_coefficient * gp
    d_opt.zero_grad()
    loss.backward()
    d_opt.step()
    # generator step
    gen_loss = -discriminator(generator(torch.randn(8, 8))).mean()
    g_opt.zero_grad()
    gen_loss.backward()
    g_opt.step()
