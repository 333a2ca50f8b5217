# torch.distributions in two training steps without random draws (the generators differ): a
# policy-gradient (REINFORCE) step scoring fixed actions with Categorical, and a VAE-style step
# with a Normal posterior (reparameterized with fixed noise), its log_prob, and kl_divergence
# against the standard-normal prior. Sample shapes and support are checked, not the draws.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical, Normal, kl_divergence


def init(module, k0):
    with torch.no_grad():
        for k, p in enumerate(module.parameters()):
            p.copy_(torch.tensor([math.sin(0.37 * i + k + k0) * 0.5 for i in range(p.numel())]).reshape(p.shape))


# -- policy gradient: loss = -sum(log pi(a|s) * R) - 0.01 * entropy
policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
init(policy, 0)
policy_opt = torch.optim.Adam(policy.parameters(), lr=0.01)
states = torch.tensor([[math.sin(r + c) for c in range(4)] for r in range(6)])
actions = torch.tensor([0, 2, 1, 1, 0, 2])
returns = torch.tensor([1.0, 0.5, -0.2, 0.8, 0.1, -0.5])
pg_losses = []
for step in range(3):
    dist = Categorical(logits=policy(states))
    loss = -(dist.log_prob(actions) * returns).sum() - 0.01 * dist.entropy().sum()
    policy_opt.zero_grad()
    loss.backward()
    policy_opt.step()
    pg_losses.append(loss.item())
dist = Categorical(probs=F.softmax(policy(states), -1))
draws = dist.sample((5,))

# -- VAE step: encoder -> Normal(mu, sigma), z = mu + sigma * eps, Bernoulli-free MSE decoder
encoder, decoder = nn.Linear(8, 4), nn.Linear(2, 8)
init(encoder, 1)
init(decoder, 2)
vae_opt = torch.optim.SGD(list(encoder.parameters()) + list(decoder.parameters()), lr=0.05)
x = torch.tensor([[math.cos(0.5 * r + c) for c in range(8)] for r in range(5)])
eps = torch.tensor([[math.sin(3.0 * r + c) for c in range(2)] for r in range(5)])
prior = Normal(torch.zeros(2), torch.ones(2))
vae_losses, kls = [], []
for step in range(3):
    h = encoder(x)
    posterior = Normal(h[:, :2], F.softplus(h[:, 2:]) + 1e-3)
    z = posterior.mean + posterior.stddev * eps
    kl = kl_divergence(posterior, prior).sum(-1)
    loss = F.mse_loss(decoder(z), x, reduction="none").sum(-1) + kl - 0.1 * posterior.log_prob(z).sum(-1)
    vae_opt.zero_grad()
    loss.mean().backward()
    vae_opt.step()
    vae_losses.append(loss.mean().item())
    kls.append(kl.tolist())
rsampled = posterior.rsample((7,))

result = {"pg_losses": pg_losses, "probs": dist.probs[0].tolist(), "entropy": dist.entropy().tolist(),
          "draw_shape": list(draws.shape), "draws_in_support": bool(((draws >= 0) & (draws < 3)).all()),
          "vae_losses": vae_losses, "kls": kls, "cdf": posterior.cdf(torch.zeros(5, 2)).tolist(),
          "rsample_shape": list(rsampled.shape), "rsample_grad": rsampled.requires_grad,
          "weight": encoder.weight.reshape(-1).tolist()[:8]}
