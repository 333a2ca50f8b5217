"""The "Train" demo: a small CNN learning scikit-learn's 8x8 handwritten digits (1797 images).

Plain PyTorch code (torch, torch.nn, torch.optim, torch.utils.data; no numpy): it runs unchanged
on PyTorch and on torchweb (after torchweb.install_torch_alias(), or executed with `torch` bound
to torchweb). The data come as lists (scripts/fetch_digits.py writes them to digits.json: 64 pixel
values 0..16 per image and a label 0..9):

    model, history = train(images, labels, progress=lambda epoch, loss, acc: ...)

The train/test split is made with Python's own seeded `random`, so it is the same images on every
library; the weights' initialization and the batches' order come from the library's generator
seeded with torch.manual_seed(seed), so curves differ between libraries but not between runs.
"""

import random

import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

N_TEST = 360


def split(images, labels, n_test=N_TEST, seed=0):
    """((train_images, train_labels), (test_images, test_labels)): a fixed seeded split."""
    order = list(range(len(labels)))
    random.Random(seed).shuffle(order)
    test, train_ = order[:n_test], order[n_test:]
    return ([images[i] for i in train_], [labels[i] for i in train_]), \
        ([images[i] for i in test], [labels[i] for i in test])


def make_model():
    """The CNN: 1x8x8 -> 16x8x8 -> 32x8x8 -> 32x4x4 -> 64 -> 10 logits."""
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 4 * 4, 64), nn.ReLU(),
        nn.Linear(64, 10),
    )


def to_tensors(images, labels, device=None):
    """(x, y): x float32 of shape (n, 1, 8, 8) scaled to 0..1, y int64 of shape (n,)."""
    x = torch.tensor(images, dtype=torch.float32, device=device).div(16.0).view(-1, 1, 8, 8)
    y = torch.tensor(labels, dtype=torch.int64, device=device)
    return x, y


def accuracy(model, x, y):
    """Fraction of the images in x whose predicted class is y."""
    model.eval()
    with torch.no_grad():
        correct = (model(x).argmax(dim=1) == y).sum().item()
    model.train()
    return correct / len(y)


def train(images, labels, epochs=6, lr=8e-3, batch_size=32, seed=0, device=None, progress=None):
    """Train the CNN on a fixed split of (images, labels); progress(epoch, loss, test_accuracy)
    is called after each epoch (epoch counts from 1; loss is the epoch's mean training loss).
    Returns (model, history) with history a list of dicts {"epoch", "loss", "accuracy"}."""
    (train_images, train_labels), (test_images, test_labels) = split(images, labels, seed=seed)
    torch.manual_seed(seed)
    x_train, y_train = to_tensors(train_images, train_labels, device)
    x_test, y_test = to_tensors(test_images, test_labels, device)
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=batch_size, shuffle=True)
    model = make_model().to(device) if device is not None else make_model()
    optimizer = optim.Adam(model.parameters(), lr=lr)
    # the learning rate decays to 0 along a cosine over all the steps: a steady last epoch
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs * len(loader))
    loss_fn = nn.CrossEntropyLoss()
    history = []
    model.train()
    for epoch in range(1, epochs + 1):
        total = 0.0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            scheduler.step()
            total = total + loss.detach() * len(yb)     # one readback per epoch, not per step
        mean_loss = float(total.item()) / len(y_train) if not isinstance(total, float) else total
        acc = accuracy(model, x_test, y_test)
        history.append({"epoch": epoch, "loss": mean_loss, "accuracy": acc})
        if progress is not None:
            progress(epoch, mean_loss, acc)
    return model, history
