"""The flush feed (backends/webgpu/feed.py): when recorded work goes to the GPU before anything
asks for it. The estimator's rules by themselves, then the runtime flushing mid-size kernels as
the GPU is estimated to run dry, with PyTorch's results either way."""

import pytest
import torch

import torchweb
from oracle import assert_close
from torchweb.backends.webgpu import feed as F
from torchweb.backends.webgpu import runtime as R


def test_an_unmeasured_gpu_is_fed_only_past_the_first_minimum():
    f = F.Feed(16 << 20)
    nbytes, at = f.due()
    assert nbytes == max(16 << 20, int(F.FLUSH_COST_START * F.RATE_START))
    assert at == -F.FLUSH_COST_START        # nothing submitted: due at once


def test_submitted_work_is_queued_behind_what_runs():
    f = F.Feed(1 << 20)
    f.rate = 1e9                             # 1 GB/s: 1 MB is 1 ms
    f.flushed(1 << 20, 0.0, 0.001)
    first_end = f.busy_until
    assert first_end == pytest.approx(0.001 + (1 << 20) / 1e9)
    f.flushed(1 << 20, 0.0015, 0.0016)       # submitted before the first ends: queued behind it
    assert f.busy_until == pytest.approx(first_end + (1 << 20) / 1e9)
    nbytes, at = f.due()
    assert at == pytest.approx(f.busy_until - f.flush_cost)
    assert nbytes == max(1 << 20, int(f.flush_cost * f.rate))


def test_the_flush_cost_follows_measurements():
    f = F.Feed(0)
    for _ in range(40):
        f.flushed(0, 1.0, 1.0 + 30e-6)
    assert f.flush_cost == pytest.approx(30e-6, rel=1e-3)


def test_a_wait_measures_a_lower_bound_of_the_rate_and_it_only_grows():
    f = F.Feed(0)
    f.flushed(F.CALIBRATE_BYTES, 0.0, 1.0)          # the GPU started by t = 1
    f.idle(1.0 + 1e-4)                              # and was done 100 us later
    assert f.rate == pytest.approx(F.CALIBRATE_BYTES / 1e-4) and f.rate > F.RATE_START
    assert f.busy_until == 0.0 and f.busy_work == 0
    fast = f.rate
    f.flushed(F.CALIBRATE_BYTES, 2.0, 3.0)
    f.idle(3.001)                                   # slower this time (the GPU idled): kept
    assert f.rate == fast
    f.flushed(F.CALIBRATE_BYTES // 2, 20.0, 21.0)
    f.idle(21.0 + 1e-9)                             # too little work to measure anything
    assert f.rate == fast
    g = F.Feed(0)
    g.flushed(F.CALIBRATE_BYTES, 0.0, 1.0)
    g.idle(2.0)                                     # slower than where it starts: not taken
    assert g.rate == F.RATE_START


def test_feed_off_never_asks_for_a_flush(monkeypatch):
    monkeypatch.setattr(F, "FEED_GPU", False)
    f = F.Feed(0)
    assert f.due() == (1 << 62, 0.0)
    assert f.flushed(1 << 30, 0.0, 1.0) == (1 << 62, 0.0)


def _rowsum_flushes(rt, n_calls):
    a = torch.randn(1024, 1024)   # 4 MB bound a call
    x = torchweb.tensor(a.tolist(), device="webgpu")
    torchweb.webgpu.synchronize()
    before = rt.flushes
    ys = [x.sum(1) for _ in range(n_calls)]
    during = rt.flushes - before
    for y in ys:
        assert_close(y, a.sum(1), rtol=1e-4, atol=1e-3)
    return during


@pytest.mark.parametrize("due, flushes", [((1 << 20, 0.0), 6),            # due now: each call
                                          ((1 << 20, float("inf")), 0),   # GPU busy: none
                                          ((1 << 62, 0.0), 0)])           # too little work
def test_the_runtime_flushes_when_the_feed_says(monkeypatch, due, flushes):
    rt = R.get_runtime()
    # every other rule out of the way; the estimate itself is tested above
    monkeypatch.setattr(R, "FLUSH_WORK_BYTES", 1 << 62)
    monkeypatch.setattr(R, "IDLE_START_BYTES", 1 << 62)
    monkeypatch.setattr(R, "FLUSH_AFTER_S", 1e9)
    monkeypatch.setattr(F.Feed, "flushed", lambda self, *a: due)
    monkeypatch.setattr(F.Feed, "idle", lambda self, t: due)
    assert _rowsum_flushes(rt, 6) == flushes
