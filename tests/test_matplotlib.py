"""matplotlib (Agg) plotting torchweb tensors natively, compared with the same plots of PyTorch
tensors: plot's Line2D data, scatter's offsets, imshow's AxesImage array (2-D, and 3-D images
permuted from CHW, float and uint8) and hist's counts, bins and bars, on both devices.

matplotlib needs numpy, so tensors always reach it as arrays; it takes two routes to them:
- under install_torch_alias(), sys.modules["torch"] is torchweb, so matplotlib's torch check
  (cbook._is_torch_array) knows the tensor and converts it once through Tensor.__array__;
- without the alias (`import torchweb as torch`; no torch module, or the real one) it does not,
  and treats the tensor as a sequence: plot and imshow still call __array__ on the whole tensor,
  but hist converts element by element (one readback each on the GPU; values still equal).
The alias itself is checked in a fresh interpreter (the real torch never imported there)."""

import sys

import numpy as np
import pytest
import torch
import torchweb

from fresh_python import run_fresh
from oracle import ours

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROUTES = ["alias", "no_torch_module"]


def _curve():
    x = torch.linspace(-2.0, 3.0, 40)
    return x, torch.sin(x * 1.7) + 0.1 * x


def _image_chw():
    return (torch.arange(3 * 5 * 6, dtype=torch.float32).reshape(3, 5, 6) * 0.37).sin() * 0.5 + 0.5


PLOTS = {
    "plot_y": lambda m, a: plt.plot(a[1])[0].get_xydata(),
    "plot_xy": lambda m, a: plt.plot(a[0], a[1], "r--")[0].get_xydata(),
    "plot_2d_columns": lambda m, a: [ln.get_xydata() for ln in plt.plot(_stack(m, [a[1], a[0]]))],
    "scatter": lambda m, a: plt.scatter(a[0], a[1]).get_offsets(),
    "imshow_2d": lambda m, a: plt.imshow(a[2][0], cmap="gray").get_array(),
    "imshow_hwc": lambda m, a: plt.imshow(a[2].permute(1, 2, 0)).get_array(),
    "imshow_hwc_uint8": lambda m, a: plt.imshow((a[2] * 255).to(m.uint8).permute(1, 2, 0)).get_array(),
    "hist": lambda m, a: _hist(plt.hist(a[1], bins=7)),
    "hist_range_density": lambda m, a: _hist(plt.hist(a[1], bins=5, range=(-1.0, 1.0), density=True)),
    "hist_2d_columns": lambda m, a: _hist(plt.hist(_stack(m, [a[1], a[0]]), bins=4)),
}


def _stack(m, columns):
    if isinstance(columns[0], list):   # (the nested-list reference)
        return [list(row) for row in zip(*columns)]
    return m.stack(columns, 1)


def _hist(out):
    counts, bins, bars = out
    heights = [p.get_height() for c in (bars if isinstance(bars, list) else [bars]) for p in c]
    return [np.asarray(counts), bins, np.asarray(heights)]


def _draw(module, args, name, torch_module):
    """PLOTS[name] on a fresh figure, with sys.modules["torch"] as given (None: absent), the
    data as numpy arrays (imshow's figure drawn too: Agg resamples the image)."""
    saved = sys.modules.get("torch")
    if torch_module is None:
        sys.modules.pop("torch", None)
    else:
        sys.modules["torch"] = torch_module
    try:
        fig = plt.figure()
        out = PLOTS[name](module, args)
        if name.startswith("imshow"):
            fig.canvas.draw()
        return [np.ma.getdata(o) for o in out] if isinstance(out, list) else np.ma.getdata(out)
    finally:
        plt.close("all")
        sys.modules["torch"] = saved


def _assert_same(got, want):
    if isinstance(want, list):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _assert_same(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("name", sorted(PLOTS))
def test_plot_data_equals_pytorchs(device, name, route):
    x, y = _curve()
    img = _image_chw()
    want = _draw(torch, (x, y, img), name, torch)
    args = tuple(ours(t, device) for t in (x, y, img))
    got = _draw(torchweb, args, name, torchweb if route == "alias" else None)
    if name == "hist_2d_columns" and route == "no_torch_module":
        # a sequence of rows, each its own data set: matplotlib's reading of the nested list
        want = _draw(torchweb, tuple(t.tolist() for t in args), name, None)
        assert len(want[0]) == len(x)
    _assert_same(got, want)


def test_alias_converts_each_tensor_once(device, monkeypatch):
    """Under the alias matplotlib converts a tensor whole: one __array__ (one readback on the
    GPU) for hist's 200 values, where the sequence route takes one per element."""
    calls = []
    array = torchweb.Tensor.__array__
    monkeypatch.setattr(torchweb.Tensor, "__array__", lambda t, *a, **k: calls.append(t.shape) or array(t, *a, **k))
    t = torchweb.linspace(0.0, 1.0, 200, device=device)
    for route, most in (("alias", 1), ("no_torch_module", 200)):
        calls.clear()
        _draw(torchweb, (None, t, None), "hist", torchweb if route == "alias" else None)
        assert len(calls) <= most and (route == "alias" or len(calls) > 1), (route, len(calls))


def test_array_conversion_as_pytorchs(device):
    """What matplotlib's conversions rest on: np.asarray/np.array give PyTorch's values and dtype,
    and np.array's array is a copy (writing to it leaves the tensor as it was)."""
    for want in (torch.linspace(-1.0, 1.0, 6).reshape(2, 3), torch.arange(5), torch.tensor([True, False])):
        t = ours(want, device)
        for convert in (np.asarray, np.array, lambda x: np.asarray(x, dtype=np.float64)):
            got, ref = convert(t), convert(want)
            assert got.dtype == ref.dtype and got.shape == ref.shape
            np.testing.assert_array_equal(got, ref)
        copied = np.array(t)
        copied[...] = 0
        assert t.tolist() == want.tolist()


def test_under_install_torch_alias(tmp_path):
    """The alias in a fresh interpreter: `import torch` is torchweb, and matplotlib's figures hold
    PyTorch's values (computed here by the real torch)."""
    x, y = _curve()
    img = _image_chw()
    want = [_draw(torch, (x, y, img), name, torch) for name in ("plot_xy", "imshow_hwc", "hist")]
    out = run_fresh("""
        import torchweb
        torchweb.install_torch_alias()
        import json, torch
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        x = torch.linspace(-2.0, 3.0, 40, device="cuda")
        y = torch.sin(x * 1.7) + 0.1 * x
        img = (torch.arange(3 * 5 * 6, dtype=torch.float32).reshape(3, 5, 6) * 0.37).sin() * 0.5 + 0.5
        line = plt.plot(x, y)[0]
        im = plt.imshow(img.permute(1, 2, 0))
        counts, bins, _ = plt.hist(y, bins=7)
        plt.gcf().canvas.draw()
        print(json.dumps([line.get_xydata().tolist(), im.get_array().tolist(), [counts.tolist(), bins.tolist()]]))
    """, tmp_path)
    import json
    got = json.loads(out.strip().splitlines()[-1])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[2][0], want[2][0])
    np.testing.assert_allclose(got[2][1], want[2][1], rtol=1e-6, atol=1e-6)
