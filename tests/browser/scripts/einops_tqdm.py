# einops and tqdm on torch tensors, as users pair them: rearrange/reduce/repeat, pack/unpack and
# einsum, the einops.layers.torch modules in a model (with gradients), and tqdm's bar around a
# DataLoader and a training loop. In the page neither package is in Pyodide's core: the lines
# under `emscripten` install their pure wheels with micropip from the served repository
# (.cache/browser-wheels/, written by scripts/setup.sh at the host's versions), no network.
import io
import sys

if sys.platform == "emscripten":
    import urllib.parse

    import js
    import pyodide_js
    from pyodide.ffi import run_sync
    from pyodide.http import pyfetch

    base = urllib.parse.urljoin(str(js.location.href), "../.cache/browser-wheels/")
    index = run_sync(pyfetch(base + "index.json"))
    if not index.ok:
        raise RuntimeError(f"{base}index.json: {index.status} (scripts/setup.sh downloads the wheels)")
    files = run_sync(index.json())
    run_sync(pyodide_js.loadPackage(base + files["micropip"]))
    import micropip
    run_sync(micropip.install([base + files["einops"], base + files["tqdm"]], deps=False))

import einops
import torch
from einops import einsum, pack, rearrange, reduce, repeat, unpack
from einops.layers.torch import EinMix, Rearrange, Reduce
from torch.utils.data import DataLoader, TensorDataset
from tqdm import tqdm, trange

x = (torch.arange(2 * 3 * 4 * 6, dtype=torch.float32) * 0.37).sin().reshape(2, 3, 4, 6)
images = rearrange(x, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=3)   # patches
back = rearrange(images, "b (h w) (p1 p2 c) -> b c (h p1) (w p2)", h=2, p1=2, p2=3)
pooled = reduce(x, "b c (h 2) (w 2) -> b c h w", "max")
means = reduce(x, "b c h w -> c", "mean")
tiled = repeat(x[0, 0], "h w -> (r h) w c", r=2, c=3)
packed, shapes = pack([x[:, 0], x[:, :2].sum(1), x[:, 2]], "b *")
parts = unpack(packed, shapes, "b *")
mixed = einsum(x, x, "b c h w, b c h w2 -> b w w2")
listed = rearrange([x[0, 0], x[1, 2]], "n h w -> h (n w)")   # a list of tensors stacks

# einops.layers.torch in a model: patches -> EinMix (its weights set from formulas) -> pooled
model = torch.nn.Sequential(
    Rearrange("b c (h p1) (w p2) -> b h w (p1 p2 c)", p1=2, p2=2),
    EinMix("b h w i -> b h w o", weight_shape="i o", bias_shape="o", i=12, o=5),
    torch.nn.GELU(),
    Reduce("b h w o -> b o", "mean"),
)
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        p.copy_((torch.arange(p.numel(), dtype=torch.float32) * 0.41 + k).cos().reshape(p.shape) * 0.3)
x.requires_grad_(True)
out = model(x)
out.pow(2).sum().backward()

# tqdm around a DataLoader and a training loop: the bar's final line, without rates or times
data = TensorDataset(torch.arange(40, dtype=torch.float32).reshape(20, 2) / 10, torch.arange(20) % 3)
loader = DataLoader(data, batch_size=6)
bar_file = io.StringIO()
seen = 0.0
bar = tqdm(loader, desc="batches", file=bar_file, ascii=True, mininterval=0,
           bar_format="{l_bar}{bar:10}| {n_fmt}/{total_fmt}{postfix}")
for xb, yb in bar:
    seen += xb.sum().item() + yb.sum().item()
    bar.set_postfix(seen=f"{seen:.1f}")
bar.close()
w = torch.zeros(2, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
loop_file = io.StringIO()
for step in trange(5, file=loop_file, ascii=True, bar_format="{n_fmt}/{total_fmt}", mininterval=0):
    loss = ((data.tensors[0] @ w - 1.0) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

result = {
    "images": [list(images.shape), images.flatten().tolist()[::5]],
    "roundtrip": torch.equal(back, x.detach()), "pooled": pooled.flatten().tolist(),
    "means": means.tolist(), "tiled": [list(tiled.shape), tiled.sum().item(), tiled[5, 3].tolist()],
    "packed": [list(packed.shape), [list(s) for s in shapes], [list(p.shape) for p in parts],
               packed.sum().item()],
    "einsum": mixed.flatten().tolist()[::4], "listed": [list(listed.shape), listed.sum().item()],
    "model_out": out.flatten().tolist(), "x_grad": x.grad.flatten().tolist()[::7],
    "layer_reprs": [repr(m) for m in model if m.__class__.__module__.startswith("einops")],
    "bar": bar_file.getvalue().split("\r")[-1].strip(), "seen": seen,
    "loop_bar": loop_file.getvalue().split("\r")[-1].strip(), "w": w.tolist(),
    "einops_backend": type(einops._backends.get_backend(x)).__name__,
}
