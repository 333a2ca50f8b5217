"""The row kernels' workgroup reductions through subgroup operations (kernels/subgroups.py):
softmax / log_softmax, sum / mean / amax / amin and var / std compared with PyTorch with
subgroups on, off (the switch), and on with the kernels' own fallback branch (the tree taken
when the subgroup size does not fit, forced by raising MIN_SIZE). Row lengths 1..5000 across
the kernels' variants (a thread per row, scalar and vec4 workgroups, workgroups fitted to the
row), many rows, special values and float16. Lavapipe's subgroups hold 8 invocations,
SwiftShader's 4 (run this file with VK_ICD_FILENAMES pointing at it), an H100's 32."""

import pytest
import torch

import torchweb
from oracle import assert_close, fast_ours
from torchweb.backends.webgpu.kernels import subgroups as SG
from torchweb.backends.webgpu.runtime import get_runtime

pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")
inf, nan = float("inf"), float("nan")
ROWS = [1, 3, 4, 63, 64, 65, 100, 128, 255, 256, 257, 300, 1000, 1023, 1024, 1025, 2051, 4096, 5000]


@pytest.fixture(params=["subgroups", "off", "fallback"])
def mode(request, monkeypatch):
    """subgroups: the switch on (the default); off: the tree kernels; fallback: subgroup
    kernels whose run-time test of the subgroup size picks their tree branch."""
    if request.param != "off" and "subgroups" not in get_runtime().features:
        pytest.skip("adapter lacks subgroups")
    monkeypatch.setattr(SG, "ENABLED", request.param != "off")
    if request.param == "fallback":
        monkeypatch.setattr(SG, "MIN_SIZE", 1 << 20)
    return request.param


def _rand(*shape, seed=0, scale=3.0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g) * scale + 0.5


def _check(fn, x, tol=(1e-5, 1e-5), mine=None):
    mine = fast_ours(x, "webgpu") if mine is None else mine
    assert_close(fn(mine), fn(x), rtol=tol[0], atol=tol[1], equal_nan=True)


def _softmaxes(x, tol=(1e-5, 1e-6), mine=None):
    for fn in ("softmax", "log_softmax"):
        _check(lambda a: getattr(a, fn)(-1), x, tol, mine)


def _reductions(x, tol=(1e-5, 1e-5), mine=None):
    mine = fast_ours(x, "webgpu") if mine is None else mine
    for fn in ("sum", "mean", "amax", "amin"):
        _check(lambda a: getattr(a, fn)(-1), x, tol, mine)


def _moments(x, tol=(1e-5, 1e-5), mine=None):
    mine = fast_ours(x, "webgpu") if mine is None else mine
    _check(lambda a: a.var(-1), x, tol, mine)
    _check(lambda a: a.std(-1, correction=0), x, tol, mine)


def test_switch_keys_the_pipelines(mode):
    """The kernels compiled while the switch is on are subgroup kernels, and kept apart."""
    rt = get_runtime()
    x = fast_ours(_rand(4, 1000, seed=9), "webgpu")
    x.softmax(-1).cpu()
    x.sum(-1).cpu()
    x.var(-1).cpu()
    want = SG.MIN_SIZE if mode != "off" else 0
    for name in ("softmax_vec", "red", "moments"):
        keys = [k for k in rt._pipelines if k[0] == name]
        assert keys and any(k[-1] == want for k in keys), (name, keys)


@pytest.mark.parametrize("row", ROWS)
def test_row_lengths(mode, row):
    x = _rand(5, row, seed=1)
    _softmaxes(x)
    _softmaxes(x[:, : max(row - 1, 1)].contiguous())        # rows of 4k + 3: the scalar kernel
    _reductions(x, (1e-5, 2e-5 * (1 + row ** 0.5)))
    _moments(x)


def test_strided_rows(mode):
    x = _rand(300, 7, seed=2)
    mine = fast_ours(x, "webgpu").t()
    _softmaxes(x.t(), mine=mine)
    _reductions(x.t(), (1e-5, 1e-4), mine=mine)


@pytest.mark.parametrize("shape", [(3000, 300), (1100, 1024), (20000, 65)])
def test_many_rows(mode, shape):
    x = _rand(*shape, seed=3)
    _softmaxes(x)
    _reductions(x, (1e-5, 1e-3))
    _moments(x, (1e-4, 1e-5))


@pytest.mark.parametrize("shape", [(1, 70000), (2, 100003)])
def test_long_rows_and_whole_tensor(mode, shape):
    # chunked rows: partial sums and moments in several workgroups, merged by a second pass
    x = _rand(*shape, seed=4)
    _reductions(x, (1e-4, 1e-2))
    _moments(x, (1e-4, 1e-5))
    _check(lambda a: a.sum(), x, (1e-4, 1e-1))
    _check(lambda a: a.amax(), x)


@pytest.mark.parametrize("row", [5, 300, 1000, 1001, 4096])
def test_special_values(mode, row):
    x = _rand(8, row, seed=5)
    x[0, row // 2] = nan
    x[1, row - 1] = inf
    x[2, 0] = -inf
    x[3, :] = -inf                          # softmax: NaN, as PyTorch's
    x[4, row // 3] = inf
    x[4, row // 2] = -inf
    x[5, :] = nan
    x[6, :] = 7.0
    x[7, -1] = nan
    _softmaxes(x)
    _reductions(x)
    _moments(x)
    y = _rand(6, row, seed=6)
    y[:, ::2] = -inf                        # softmax: rows partly -inf are finite
    y[1, :] = 0.0
    _softmaxes(y)
    _reductions(y)


@pytest.mark.parametrize("row", [300, 1000, 4096])
def test_integers(mode, row):
    g = torch.Generator().manual_seed(row)
    x = torch.randint(-1000, 1000, (6, row), generator=g, dtype=torch.int32)
    mine = fast_ours(x, "webgpu")
    for fn in ("sum", "amax", "amin"):
        _check(lambda a: getattr(a, fn)(-1), x, mine=mine)


@pytest.mark.parametrize("row", [100, 1000, 4096])
def test_float16(mode, row):
    if "shader-f16" not in torchweb.webgpu.features():
        pytest.skip("adapter lacks shader-f16")
    x = _rand(6, row, seed=7).half()
    x[0, 2] = nan
    x[1, :] = -inf
    mine = fast_ours(x, "webgpu")
    for fn in ("softmax", "log_softmax"):
        assert_close(getattr(mine, fn)(-1), getattr(x.float(), fn)(-1).half(), rtol=2e-3, atol=2e-3)
    for fn in ("amax", "amin"):
        assert_close(getattr(mine, fn)(-1), getattr(x, fn)(-1))
    assert_close(mine.sum(-1), x.float().sum(-1).half(), rtol=2e-3, atol=1e-1)
    assert_close(mine.var(-1), x.float().var(-1).half(), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("row", [3, 64, 100, 384, 1000, 4096])
def test_layer_norm(mode, row):
    """kernels/layer_norm.py's row sums (forward and input gradient): subgroup sums over
    workgroups of 32..256 threads (PER_THREAD_SG elements a thread), the tree, the fallback."""
    x, w, b, g = _rand(6, row, seed=3), _rand(row, seed=4), _rand(row, seed=5), _rand(6, row, seed=6)
    xr, wr = x.clone().requires_grad_(), w.clone().requires_grad_()
    ref = torch.nn.functional.layer_norm(xr, (row,), wr, b)
    ref.backward(g)
    xm, wm = fast_ours(x, "webgpu").requires_grad_(), fast_ours(w, "webgpu").requires_grad_()
    out = torchweb.nn.functional.layer_norm(xm, (row,), wm, fast_ours(b, "webgpu"))
    out.backward(fast_ours(g, "webgpu"))
    assert_close(out.detach(), ref.detach(), rtol=1e-5, atol=1e-5)
    assert_close(xm.grad, xr.grad, rtol=1e-4, atol=1e-4)
    assert_close(wm.grad, wr.grad, rtol=1e-4, atol=1e-4)
    keys = [k for k in get_runtime()._pipelines if k[0] == "layer_norm"]
    assert any(k[-1] == (SG.MIN_SIZE if mode != "off" else 0) for k in keys), keys
