# pytorch/examples' regression/main.py: fit a degree-4 polynomial with one nn.Linear, by hand-written
# SGD. Changed from the original only where PyTorch's generator would make other numbers than
# torchweb's: the target and the batches come from Python's seeded `random`, the start from zeros.
import random
from itertools import count

import torch
import torch.nn.functional as F

try:
    from playground import plot          # draws on the playground page
except ImportError:                      # elsewhere: no plot
    def plot(*args, **kwargs): pass

POLY_DEGREE = 4
rng = random.Random(0)
W_target = torch.tensor([[rng.uniform(-1, 1)] for _ in range(POLY_DEGREE)])
b_target = torch.tensor([rng.uniform(-1, 1)])


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)


def f(x):
    """Approximated function."""
    return x.mm(W_target) + b_target.item()


def poly_desc(W, b):
    """Creates a string description of a polynomial."""
    result = 'y = '
    for i, w in enumerate(W):
        result += '{:+.2f} x^{} '.format(w, i + 1)
    result += '{:+.2f}'.format(b[0])
    return result


def get_batch(batch_size=32):
    """Builds a batch i.e. (x, f(x)) pair."""
    random = torch.tensor([rng.uniform(-1, 1) for _ in range(batch_size)])
    x = make_features(random)
    y = f(x)
    return x, y


# Define model
fc = torch.nn.Linear(W_target.size(0), 1)
with torch.no_grad():
    fc.weight.zero_()
    fc.bias.zero_()

losses = []
for batch_idx in count(1):
    # Get data
    batch_x, batch_y = get_batch()

    # Reset gradients
    fc.zero_grad()

    # Forward pass
    output = F.smooth_l1_loss(fc(batch_x), batch_y)
    loss = output.item()
    losses.append(loss)

    # Backward pass
    output.backward()

    # Apply gradients
    for param in fc.parameters():
        param.data.add_(-0.1 * param.grad)

    # Stop criterion
    if loss < 1e-3 or batch_idx >= 1000:
        break

plot(losses, title="smooth L1 loss per batch")
print('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
print('==> Learned function:\t' + poly_desc(fc.weight.view(-1).tolist(), fc.bias.tolist()))
print('==> Actual function:\t' + poly_desc(W_target.view(-1).tolist(), b_target.tolist()))
