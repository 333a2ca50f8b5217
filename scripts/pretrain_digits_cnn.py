"""The checkpoint that JupyterLite course notebook 3 (site/notebooks/3_finetune_from_url.ipynb)
fine-tunes: notebook 2's digits CNN trained by the host's real PyTorch on the digits 0 to 4 of the
first 1400 (5 classes), saved with torch.save as site/data/digits_cnn_0to4.pt. Build step
(scripts/build_jupyterlite.py); needs torch, as the test tier does. Deterministic for a torch
version (seeded; written again only when missing).

    python scripts/pretrain_digits_cnn.py
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import site_data  # noqa: E402

NAME = "digits_cnn_0to4.pt"


def cnn(nn, classes):
    """The notebooks' CNN (keep in step with site/notebooks/3_finetune_from_url.ipynb)."""
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 2 * 2, classes))


def publish(site_dir=os.path.join(site_data.REPO, "site")):
    """Path of site/data/digits_cnn_0to4.pt, trained and saved if missing."""
    dest = os.path.join(site_dir, "data", NAME)
    if os.path.isfile(dest):
        return dest
    import torch
    with open(site_data.publish_digits(site_dir)) as f:
        digits = json.load(f)
    x = torch.tensor(digits["images"][:1400], dtype=torch.float32).reshape(-1, 1, 8, 8) / 16.0
    y = torch.tensor(digits["labels"][:1400])
    x, y = x[y < 5], y[y < 5]
    torch.manual_seed(0)
    model = cnn(torch.nn, 5)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(15):
        for i in range(0, len(x), 100):
            loss = torch.nn.functional.cross_entropy(model(x[i:i + 100]), y[i:i + 100])
            opt.zero_grad()
            loss.backward()
            opt.step()
    torch.save(model.state_dict(), dest + ".partial")
    os.replace(dest + ".partial", dest)
    return dest


if __name__ == "__main__":
    print(publish())
