"""Compare-exchange loops (kernels/wgsl.py cas_loop) that run out of retries raise
errors.CONTENTION, a RuntimeError at the next readback naming the op, instead of silently
losing an update. The bound is lowered here (a module constant the kernels' pipelines are keyed
on) so that heavily contended updates on lavapipe exhaust it; at the normal bound the same
updates complete, exactly."""

import pytest

import torchweb
import torchweb.nn.functional as F
from torchweb.backends.webgpu import errors

N = 20000


@pytest.fixture
def low_bound(monkeypatch):
    monkeypatch.setattr(errors, "CAS_RETRIES", 1)


def _scatter_add():
    idx = torchweb.zeros(N, dtype=torchweb.int64, device="webgpu")
    return torchweb.zeros(3, device="webgpu").scatter_add(0, idx, torchweb.ones(N, device="webgpu"))


def _index_add():
    idx = torchweb.zeros(N, dtype=torchweb.int64, device="webgpu")
    return torchweb.zeros(2, 4, device="webgpu").index_add_(0, idx, torchweb.ones(N, 4, device="webgpu"))


def _scatter_reduce_amax():
    idx = torchweb.zeros(N, dtype=torchweb.int64, device="webgpu")
    src = torchweb.arange(N, dtype=torchweb.float32, device="webgpu")
    return torchweb.zeros(2, device="webgpu").scatter_reduce(0, idx, src, "amax")


def _embedding_backward():
    w = torchweb.ones(3, 4, device="webgpu", requires_grad=True)
    F.embedding(torchweb.zeros(N // 4, dtype=torchweb.int64, device="webgpu"), w).sum().backward()
    return w.grad


def _bincount_weights():
    x = torchweb.zeros(N, dtype=torchweb.int64, device="webgpu")
    return torchweb.bincount(x, torchweb.ones(N, device="webgpu"))


def _cummax_backward():
    x = torchweb.arange(N, 0, -1, dtype=torchweb.float32, device="webgpu").requires_grad_()
    torchweb.cummax(x, 0).values.sum().backward()   # every index is 0: all adds go to x[0]
    return x.grad


def _grid_sample_backward():
    inp = torchweb.ones(1, 1, 2, 2, device="webgpu", requires_grad=True)
    grid = torchweb.zeros(1, 1, N // 4, 2, device="webgpu")
    F.grid_sample(inp, grid, align_corners=False).sum().backward()
    return inp.grad


CASES = {  # name: (fn, words in the message, expected first value at the normal bound)
    "scatter_add": (_scatter_add, "scatter", float(N)),
    "index_add_": (_index_add, "index_add", float(N)),
    "scatter_reduce_amax": (_scatter_reduce_amax, "scatter", float(N - 1)),
    "embedding_backward": (_embedding_backward, "embedding", float(N // 4)),
    "bincount_weights": (_bincount_weights, "bincount", float(N)),
    "cummax_backward": (_cummax_backward, "cummax", float(N)),
    "grid_sample_backward": (_grid_sample_backward, "grid_sample", float(N // 4) / 4),
}


def _first(t):
    return t.reshape(-1)[0].item()


@pytest.mark.parametrize("name", sorted(CASES))
def test_exhausted_compare_exchange_raises(name, low_bound):
    fn, what, _ = CASES[name]
    with pytest.raises(RuntimeError, match="could not complete under contention") as e:
        _first(fn())
    assert what in str(e.value) and "gave up after 1 retries" in str(e.value)
    # the flag is cleared: the device and new work stay usable
    assert torchweb.ones(2, device="webgpu").sum().item() == 2.0


def test_contention_message_suggests_an_alternative(low_bound):
    with pytest.raises(RuntimeError) as e:
        _first(_scatter_add())
    assert "one_hot" in str(e.value)


@pytest.mark.parametrize("name", sorted(CASES))
def test_normal_bound_completes(name):
    fn, _, want = CASES[name]
    assert _first(fn()) == pytest.approx(want, rel=1e-6)
