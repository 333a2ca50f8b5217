# pytorch/examples' mnist/main.py, shrunk for the browser: the same Net shape (two convolutions,
# max pooling, two linear layers, log_softmax), F.nll_loss, Adadelta and StepLR, the same train()
# and test() loops, on 8x8 images of four strokes (synthetic, drawn with Python's seeded `random`
# so no download is needed). Left out, so PyTorch prints the same numbers: dropout (the two
# libraries' generators differ) and shuffling; the weights start from Python's `random` too.
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset

try:
    from playground import plot          # draws on the playground page
except ImportError:                      # elsewhere: no plot
    def plot(*args, **kwargs): pass

CLASSES = ["horizontal", "vertical", "diagonal", "anti-diagonal"]


def make_images(n, seed):
    """n noisy 8x8 images of a stroke of one of the four CLASSES, and their labels."""
    rng = random.Random(seed)
    images, labels = [], []
    for _ in range(n):
        c, k = rng.randrange(4), rng.randrange(1, 7)
        img = [[rng.uniform(0.0, 0.3) for _ in range(8)] for _ in range(8)]
        for i in range(8):
            r, col = [(k, i), (i, k), (i, i), (i, 7 - i)][c]
            img[r][col] = rng.uniform(0.7, 1.0)
        images.append([img])
        labels.append(c)
    return torch.tensor(images), torch.tensor(labels)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.fc1 = nn.Linear(16 * 2 * 2, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def same_start(model, seed=0):
    """Initial weights from Python's seeded `random` (the same on every library)."""
    rng = random.Random(seed)
    with torch.no_grad():
        for p in model.parameters():
            bound = 1 / math.sqrt(p[0].numel() if p.dim() > 1 else p.numel())
            p.copy_(torch.tensor([rng.uniform(-bound, bound) for _ in range(p.numel())]).view(p.shape))


def train(model, train_loader, optimizer, epoch, losses):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    print(f"Train Epoch: {epoch} \tLoss: {losses[-1].item():.6f}")


def test(model, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)  # get the index of the max log-probability
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    print('Test set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)'.format(
        test_loss, correct, len(test_loader.dataset), 100. * correct / len(test_loader.dataset)))
    return test_loss


train_loader = DataLoader(TensorDataset(*make_images(256, seed=1)), batch_size=16)
test_loader = DataLoader(TensorDataset(*make_images(128, seed=2)), batch_size=128)
model = Net()
same_start(model)
optimizer = optim.Adadelta(model.parameters(), lr=1.0)
scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
losses = []
for epoch in range(1, 5):
    train(model, train_loader, optimizer, epoch, losses)
    test_loss = test(model, test_loader)
    scheduler.step()
    plot(torch.stack(losses), title="training loss per batch")
print(f"final test loss: {test_loss:.6f}")
