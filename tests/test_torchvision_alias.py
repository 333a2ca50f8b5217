"""`import torchvision` under install_torch_alias(): torchweb.vision answers it (and its
submodules), code written for PyTorch runs unchanged on it, and `import torchweb` alone never
loads it. Each check runs in a fresh interpreter, where the real torch was never imported."""

from fresh_python import run_fresh


def _run(code, cwd):
    return run_fresh(code, cwd).split()


def test_import_torchweb_does_not_load_the_vision_subset(tmp_path):
    assert _run("""
        import sys, torchweb
        print(any(n.startswith("torchweb.vision") for n in sys.modules))
    """, tmp_path) == ["False"]


def test_torchvision_names_resolve_to_the_subset(tmp_path):
    out = _run("""
        import torchweb
        torchweb.install_torch_alias(torchvision=True)
        import torchvision
        from torchvision import datasets, models, transforms, utils
        import torchvision.transforms.functional as F
        import torchvision.transforms.v2 as v2
        from torchvision.transforms.v2 import functional as F2
        from torchvision.models import resnet18, ResNet18_Weights
        print(torchvision.__name__, F.__name__, v2.__name__, torchvision.__version__)
        try:
            import torchvision.ops
        except ModuleNotFoundError as e:
            print(e.name, "'torchvision.ops'" in str(e))
    """, tmp_path)
    assert out == ["torchweb.vision", "torchweb.vision.transforms.functional", "torchweb.vision.transforms.v2",
                   "0.28.0", "torchvision.ops", "True"]


def test_mnist_example_runs_unchanged(tmp_path):
    """pytorch/examples' mnist recipe (datasets.MNIST + ToTensor + Normalize, DataLoader, a CNN,
    Adadelta, StepLR) on a tiny MNIST in its original file format: the loss goes down."""
    import numpy as np
    raw = tmp_path / "data" / "MNIST" / "raw"
    raw.mkdir(parents=True)
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 64).astype(np.uint8)
    imgs = np.zeros((64, 28, 28), np.uint8)
    imgs[labels == 1, 8:20, 12:16] = 255      # a bar for ones, a blank for zeros
    imgs = np.clip(imgs + rng.integers(0, 40, imgs.shape), 0, 255).astype(np.uint8)
    for split in ("train", "t10k"):
        for kind, arr in (("images-idx3-ubyte", imgs), ("labels-idx1-ubyte", labels)):
            head = bytes([0, 0, 8, arr.ndim]) + b"".join(int(s).to_bytes(4, "big") for s in arr.shape)
            (raw / f"{split}-{kind}").write_bytes(head + arr.tobytes())
    out = _run("""
        import torchweb
        torchweb.install_torch_alias(torchvision=True)
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        import torch.optim as optim
        from torchvision import datasets, transforms
        from torch.optim.lr_scheduler import StepLR

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(1, 8, 3, 1)
                self.conv2 = nn.Conv2d(8, 16, 3, 1)
                self.fc1 = nn.Linear(576, 32)
                self.fc2 = nn.Linear(32, 10)

            def forward(self, x):
                x = F.relu(self.conv1(x))
                x = F.max_pool2d(F.relu(self.conv2(x)), 2)
                x = F.max_pool2d(x, 2)
                x = torch.flatten(x, 1)
                return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)

        torch.manual_seed(1)
        transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
        train = datasets.MNIST("data", train=True, download=True, transform=transform)
        test = datasets.MNIST("data", train=False, transform=transform)
        loader = torch.utils.data.DataLoader(train, batch_size=16, shuffle=True)
        model = Net()
        opt = optim.Adadelta(model.parameters(), lr=1.0)
        sched = StepLR(opt, step_size=1, gamma=0.7)
        losses = []
        for epoch in range(3):
            for data, target in loader:
                opt.zero_grad()
                loss = F.nll_loss(model(data), target)
                loss.backward()
                opt.step()
                losses.append(loss.item())
            sched.step()
        model.eval()
        with torch.no_grad():
            data, target = next(iter(torch.utils.data.DataLoader(test, batch_size=64)))
            correct = model(data).argmax(dim=1).eq(target).sum().item()
        print(losses[0], sum(losses[-2:]) / 2, correct)
    """, tmp_path)
    first, last, correct = float(out[0]), float(out[1]), int(out[2])
    assert last < first / 3, (first, last)
    assert correct >= 56, correct   # of 64


def test_einops_and_tqdm_run_on_torchweb_tensors(tmp_path):
    """The real einops and tqdm (pure Python) under the alias: einops picks its torch backend
    for torchweb's tensors; outputs equal PyTorch's."""
    import pytest
    einops = pytest.importorskip("einops")
    pytest.importorskip("tqdm")
    import torch
    x = torch.arange(2 * 3 * 4 * 6, dtype=torch.float32).reshape(2, 3, 4, 6)
    expected = [einops.rearrange(x, "b c (h p) (w q) -> b (h w) (p q c)", p=2, q=3).tolist(),
                einops.reduce(x, "b c h w -> b c", "mean").tolist(),
                einops.repeat(x[0, 0], "h w -> h w k", k=2).sum().item()]
    out = _run("""
        import json, torchweb
        torchweb.install_torch_alias()
        import torch, einops
        from einops.layers.torch import Rearrange
        from tqdm import tqdm
        x = torch.arange(2 * 3 * 4 * 6, dtype=torch.float32).reshape(2, 3, 4, 6)
        total = 0
        for _ in tqdm(range(3), disable=True):
            total += 1
        r = einops.rearrange(x, "b c (h p) (w q) -> b (h w) (p q c)", p=2, q=3)
        assert torch.equal(Rearrange("b c (h p) (w q) -> b (h w) (p q c)", p=2, q=3)(x), r)
        print(json.dumps([r.tolist(), einops.reduce(x, "b c h w -> b c", "mean").tolist(),
                          einops.repeat(x[0, 0], "h w -> h w k", k=2).sum().item(), total]))
    """, tmp_path)
    import json
    assert json.loads(out[0] if len(out) == 1 else " ".join(out)) == expected + [3]
