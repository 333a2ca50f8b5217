"""A lost WebGPU device (docs/reliability.md, "Device loss"): the device is destroyed through the
driver (torchweb.webgpu._destroy_device, WebGPU's device.destroy()), as a GPU reset, a killed
kernel or a removed GPU would lose it. The next op that reaches the GPU raises DeviceLostError,
the old device's tensors raise when touched, and reset() (or the next new tensor) gives a working
device whose results match PyTorch's."""

import gc
import warnings

import pytest
import torch

import torchweb
from torchweb.backends.webgpu import runtime as rt_module

from oracle import assert_close, ours

DeviceLostError = torchweb.webgpu.DeviceLostError

pytestmark = pytest.mark.skipif(not torchweb.webgpu.is_available(), reason="needs the webgpu device")


def _lose():
    """Destroy the device and return the first DeviceLostError (from the next op that reaches it)."""
    torchweb.webgpu._destroy_device()
    with pytest.raises(DeviceLostError) as info:
        (torchweb.ones(3, device="webgpu") + 1).tolist()
    return info.value


def _small_model_check():
    """A matmul, softmax and reduction on the current device, compared with PyTorch."""
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(16, 8, generator=g), torch.randn(8, 5, generator=g)
    got = (ours(a, "webgpu") @ ours(b, "webgpu")).softmax(-1)
    assert_close(got, (a @ b).softmax(-1))
    assert_close(got.sum(0), (a @ b).softmax(-1).sum(0))


def test_next_op_raises_device_lost_error_naming_the_reason():
    torchweb.webgpu.reset()
    err = _lose()
    assert isinstance(err, RuntimeError)
    assert "WebGPU device was lost" in str(err) and "reset()" in str(err)
    # what WebGPU said: wgpu-native's lost callback reason ("destroyed"), else its error
    assert err.reason and err.reason in str(err)
    assert "destroyed" in err.reason or "lost" in err.reason.lower()
    _small_model_check()   # the next use started a new device


@pytest.mark.parametrize("op", ["index", "gather", "int_div", "cumsum", "sort"])
def test_any_kind_of_first_op_raises_device_lost_error(op):
    """Ops that reach the runtime in different ways (error-checked kernels, scans, sorts)."""
    torchweb.webgpu.reset()
    torchweb.webgpu._destroy_device()

    def run():   # (inputs made each time: the first call's are on the lost device)
        idx, x = torchweb.tensor([2, 0, 1]), torchweb.tensor([3.0, 1.0, 2.0])
        return {"index": lambda: x[idx], "gather": lambda: x.gather(0, idx), "int_div": lambda: (idx + 3) // (idx + 1),
                "cumsum": lambda: x.cumsum(0), "sort": lambda: x.sort().values}[op]()

    with pytest.raises(DeviceLostError, match="WebGPU device was lost"):
        run().tolist()
    assert run().tolist() == {"index": [2.0, 3.0, 1.0], "gather": [2.0, 3.0, 1.0], "int_div": [1, 3, 2],
                              "cumsum": [3.0, 4.0, 6.0], "sort": [1.0, 2.0, 3.0]}[op]


def test_old_tensors_raise_when_touched():
    torchweb.webgpu.reset()
    a = torchweb.arange(6.0, device="webgpu") * 2
    w = torchweb.randn(4, 4, device="webgpu")
    a.tolist()
    _lose()
    for touch in (lambda: a.tolist(), lambda: (a + 1).tolist(), lambda: repr(a), lambda: w @ w,
                  lambda: a.sum().item(), lambda: a.add_(1), lambda: a.cpu(), lambda: a[torchweb.tensor([1, 0])],
                  lambda: a.sort().values.tolist(), lambda: a.cumsum(0).tolist()):
        with pytest.raises(DeviceLostError, match="this tensor was on a WebGPU device that was lost"):
            touch()
    # still after reset(): never garbage from the new device's buffers of the same ids
    torchweb.webgpu.reset()
    fresh = torchweb.arange(6.0, device="webgpu") * 3
    with pytest.raises(DeviceLostError):
        a.tolist()
    assert fresh.tolist() == [0.0, 3.0, 6.0, 9.0, 12.0, 15.0]


def test_reset_gives_a_working_device_and_sane_memory_stats():
    torchweb.webgpu.reset()
    keep = torchweb.randn(1024, device="webgpu") + 1
    keep.tolist()
    assert torchweb.webgpu.memory_allocated() >= 4096
    _lose()
    info = torchweb.webgpu.reset()
    assert info["description"] == torchweb.webgpu.adapter_info()["description"]
    # the new device holds nothing of the old one (whose tensors are alive but gone)
    assert torchweb.webgpu.memory_allocated() == 0
    assert torchweb.webgpu.memory_reserved() == 0
    _small_model_check()
    x = torchweb.ones(256, device="webgpu") * 2
    x.tolist()
    assert torchweb.webgpu.memory_allocated() == 1024
    del keep


def test_reset_async_starts_a_new_device():
    import asyncio
    torchweb.webgpu.reset()
    a = torchweb.ones(4)
    _lose()
    info = asyncio.run(torchweb.webgpu.reset_async())
    assert info == torchweb.webgpu.adapter_info()
    with pytest.raises(DeviceLostError, match="this tensor"):
        a.tolist()
    _small_model_check()


def test_reset_of_a_live_device_drops_its_tensors():
    torchweb.webgpu.reset()
    a = torchweb.ones(4, device="webgpu")
    a.tolist()
    torchweb.webgpu.reset()
    with pytest.raises(DeviceLostError, match="reset\\(\\) was called"):
        a.tolist()
    _small_model_check()


def test_pending_and_compiled_work_of_the_lost_device_is_dropped():
    torchweb.webgpu.reset()
    a = torchweb.ones(64, device="webgpu")
    a.tolist()
    pending = a * 3 + 1          # recorded, not run (the lazy layer may hold it)

    @torchweb.compile
    def step(x):
        return (x * 2).sum()

    x = torchweb.ones(8, device="webgpu")
    for _ in range(4):
        step(x).item()
    _lose()
    torchweb.webgpu.synchronize()   # nothing of the old device is left to run
    with pytest.raises(DeviceLostError):
        pending.tolist()
    y = torchweb.ones(8, device="webgpu")
    for _ in range(4):              # captured again on the new device
        assert step(y).item() == 16.0
    assert step.compile_stats["captures"] >= 1


def test_loss_while_compile_records():
    torchweb.webgpu.reset()
    lose_now = [False]

    @torchweb.compile
    def step(x):
        y = x * 2
        if lose_now[0]:
            torchweb.webgpu._destroy_device()
        return (y + 1).sum()

    x = torchweb.ones(8)
    step(x).item()           # (warm-up calls run eagerly; the next ones record)
    lose_now[0] = True
    with pytest.raises(DeviceLostError, match="WebGPU device was lost"):
        for _ in range(4):
            step(x).item()
    lose_now[0] = False
    y = torchweb.ones(8)
    assert [step(y).item() for _ in range(4)] == [24.0] * 4


def _live_gpu_objects():
    gc.collect()
    import wgpu
    with warnings.catch_warnings():   # (isinstance on every object wakes deprecated modules' names)
        warnings.simplefilter("ignore")
        return _count(wgpu)


def _count(wgpu):
    kinds = (wgpu.GPUBuffer, wgpu.GPUBindGroup, wgpu.GPUComputePipeline, wgpu.GPUDevice)
    counts = {k.__name__: 0 for k in kinds}
    for o in gc.get_objects():
        for k in kinds:
            if isinstance(o, k):
                counts[k.__name__] += 1
    counts["runtimes"] = sum(isinstance(o, rt_module.Runtime) for o in gc.get_objects())
    return counts


def test_repeated_loss_and_reset_cycles_do_not_leak():
    def cycle():
        w = torchweb.randn(64, 64, device="webgpu")
        for _ in range(3):
            (w @ w).softmax(-1).sum().item()
        _lose()
        torchweb.webgpu.reset()
        _small_model_check()

    torchweb.webgpu.reset()
    cycle()
    before = _live_gpu_objects()
    for _ in range(4):
        cycle()
    after = _live_gpu_objects()
    # one live device (the current); each lost runtime is kept as a small tombstone without its
    # device (runtime._LOST: caches keyed by id(runtime) must not meet a new runtime under its id)
    assert after["GPUDevice"] == before["GPUDevice"] == 1, (before, after)
    assert after["runtimes"] == before["runtimes"] + 4, (before, after)
    assert all(rt.driver.device is None and rt.pool.live_bytes == 0 for rt in rt_module._LOST)
    for kind in ("GPUBuffer", "GPUBindGroup", "GPUComputePipeline"):
        assert after[kind] <= before[kind], (kind, before, after)


def test_errors_are_runtime_errors_like_pytorchs():
    assert issubclass(DeviceLostError, RuntimeError)
    assert torchweb.webgpu.DeviceLostError is rt_module.DeviceLostError
