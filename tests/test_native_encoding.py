"""The native driver's two encodings (backends/webgpu/native_encoding.py): the C one used where
wgpu-py's internals are as expected, and wgpu-py's methods otherwise. Both must give PyTorch's
results, submit long programs in pieces, and raise a validation error at submit."""

import pytest
import torch

import torchweb
from oracle import assert_close
from torchweb.backends.webgpu import native_encoding as NE
from torchweb.backends.webgpu.runtime import get_runtime


def _driver():
    rt = get_runtime()
    if rt.driver.name != "native":
        pytest.skip("native driver only")
    return rt.driver


def _work():
    g = torch.Generator().manual_seed(3)
    a, b = torch.rand(33, 17, generator=g), torch.rand(17, 9, generator=g)
    x, y = torchweb.tensor(a.tolist(), device="webgpu"), torchweb.tensor(b.tolist(), device="webgpu")
    got = [x @ y, x.sum(1), (x * 2 + 1)[3:7, 2:5].contiguous(), x.t().softmax(-1)]
    want = [a @ b, a.sum(1), (a * 2 + 1)[3:7, 2:5].contiguous(), a.t().softmax(-1)]
    for g_, w in zip(got, want):
        assert_close(g_, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("which", ["c", "py"])
@pytest.mark.parametrize("submit_every", [1, 64])
def test_encodings_match_pytorch(monkeypatch, which, submit_every):
    drv = _driver()
    if which == "c":
        assert isinstance(drv._encoding(), NE.CEncoding), "wgpu-py's internals changed: C path off"
    else:
        monkeypatch.setattr(drv, "_encoding", lambda: NE.PyEncoding(drv.device))
    monkeypatch.setattr(NE, "SUBMIT_EVERY", submit_every)
    _work()
    torchweb.webgpu.synchronize()


@pytest.mark.parametrize("which", ["c", "py"])
def test_invalid_copy_raises_and_device_carries_on(which):
    import wgpu
    drv = _driver()
    enc = drv._encoding() if which == "c" else NE.PyEncoding(drv.device)
    usage = wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    src = drv.device.create_buffer(size=16, usage=usage)
    dst = drv.device.create_buffer(size=16, usage=usage)
    # a copy size that is not a multiple of 4 is invalid: the encoder's finish reports it
    with pytest.raises(Exception, match="(?i)valid|multiple|size|copy"):
        enc.copy(src, 0, dst, 0, 3)
        enc.submit()
    _work()
