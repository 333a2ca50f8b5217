"""Uniform reuse (runtime.REUSE_PARAMS, SHARE_PARAMS) and the pass state the C encoding keeps between
dispatches (native_encoding.CEncoding): equal uniforms share one slot, a flush whose uniforms
the params buffer already holds skips their upload, and a loop of one op sets its pipeline
and bind group once. Every case is checked against PyTorch, across flushes that do and do not
upload."""

import pytest
import torch

import torchweb
from oracle import assert_close
from torchweb.backends.webgpu import commands as C
from torchweb import lazy
from torchweb.backends.webgpu import native_encoding as NE
from torchweb.backends.webgpu import runtime as R


def _params_uploads(monkeypatch):
    """A list that gets, for each flush the driver executes, how many uniform bytes it uploads."""
    rt = R.get_runtime()
    seen = []
    execute = rt.driver.execute

    def spy(words, blob):
        i, up = 0, 0
        while i < len(words):
            if words[i] == C.WRITE and words[i + 1] == R.PARAMS_BUFFER_ID:
                up += words[i + 4]
            i += C.row_length(words, i)
        seen.append(up)
        return execute(words, blob)

    monkeypatch.setattr(rt.driver, "execute", spy)
    return seen


def _flushed(t):
    lazy.realize_all()
    R.get_runtime().flush()
    return t


def test_equal_uniforms_share_a_slot_and_are_not_uploaded_again(monkeypatch):
    a = torch.randn(40, 30)
    x = torchweb.tensor(a.tolist(), device="webgpu")
    torchweb.webgpu.synchronize()
    uploads = _params_uploads(monkeypatch)
    got = [_flushed(x.sum(1)) for _ in range(3)]       # one slot each flush, the same bytes
    for g in got:
        assert_close(g, a.sum(1))
    assert uploads[0] > 0 and uploads[1:] == [0, 0], uploads
    # three equal reductions in one flush: one slot of uniforms, not three
    ys = [x.sum(1) for _ in range(3)]
    _flushed(ys[-1])
    assert uploads[-1] == 0, uploads     # the buffer already holds that slot
    for g in ys:
        assert_close(g, a.sum(1))


def test_a_prefix_is_reused_and_other_uniforms_are_uploaded(monkeypatch):
    a, b = torch.randn(16, 24), torch.randn(7, 5)
    x, y = (torchweb.tensor(t.tolist(), device="webgpu") for t in (a, b))
    torchweb.webgpu.synchronize()
    uploads = _params_uploads(monkeypatch)
    first, second = x.sum(1), y.amax(0)            # slots [A, B]
    _flushed(second)
    again = _flushed(x.sum(1))                     # [A]: a prefix of what the buffer holds
    other = _flushed(y.amax(0))                    # [B] at offset 0: must be uploaded
    last = _flushed(x.sum(1))                      # [A] again: the buffer now holds [B]
    assert uploads[0] > 0 and uploads[1] == 0 and uploads[2] > 0 and uploads[3] > 0, uploads
    for g, w in ((first, a.sum(1)), (second, b.amax(0)), (again, a.sum(1)),
                 (other, b.amax(0)), (last, a.sum(1))):
        assert_close(g, w)


def test_unshared_slots_are_reused_as_a_prefix(monkeypatch):
    # without shared slots (the browser's setting) equal uniforms take a slot each; a flush of
    # fewer of them still finds its bytes at the front of the buffer
    monkeypatch.setattr(R.get_runtime(), "share_params", False)
    a = torch.randn(12, 7)
    x = torchweb.tensor(a.tolist(), device="webgpu")
    torchweb.webgpu.synchronize()
    uploads = _params_uploads(monkeypatch)
    ys = [x.sum(1) for _ in range(3)]
    _flushed(ys[-1])
    one = _flushed(x.sum(1))
    assert uploads[0] >= 3 * R.UNIFORM_ALIGN and uploads[1] == 0, uploads
    for g in ys + [one]:
        assert_close(g, a.sum(1))


def test_reuse_off_uploads_every_flush(monkeypatch):
    monkeypatch.setattr(R, "REUSE_PARAMS", False)
    a = torch.randn(9, 11)
    x = torchweb.tensor(a.tolist(), device="webgpu")
    torchweb.webgpu.synchronize()
    uploads = _params_uploads(monkeypatch)
    for _ in range(3):
        assert_close(_flushed(x.sum(1)), a.sum(1))
    assert all(u > 0 for u in uploads), uploads


def test_compiled_steps_still_upload_their_uniforms():
    # a captured program replays the uniforms it recorded: after replays, eager flushes of the
    # same op must not trust what the params buffer held before them
    a = torch.randn(12, 8)
    x = torchweb.tensor(a.tolist(), device="webgpu")
    f = torchweb.compile(lambda t: (t * 3).sum(1))
    want = (a * 3).sum(1)
    for _ in range(4):
        assert_close(f(x), want)
        assert_close(_flushed(x.amax(1)), a.amax(1))
        assert_close(_flushed(x.sum(0)), a.sum(0))


def _count_state_sets(monkeypatch, drv):
    """A list that gets "pipeline", "group" and "dispatch" for each such C call of the native
    driver's encoding."""
    sets = []
    real = drv._encoding

    def counting():
        enc = real()
        c = enc.c
        calls = NE.CCalls.__new__(NE.CCalls)
        calls.__dict__.update(c.__dict__)
        calls.set_pipeline = lambda *a: (sets.append("pipeline"), c.set_pipeline(*a))[1]
        calls.set_group = lambda *a: (sets.append("group"), c.set_group(*a))[1]
        calls.dispatch = lambda *a: (sets.append("dispatch"), c.dispatch(*a))[1]
        enc.c = calls
        return enc

    monkeypatch.setattr(drv, "_encoding", counting)
    return sets


@pytest.mark.parametrize("which", ["c", "py"])
def test_one_op_in_a_loop_sets_its_state_once_and_stays_right(monkeypatch, which):
    drv = R.get_runtime().driver
    if drv.name != "native":
        pytest.skip("native driver only")
    if which == "py":
        monkeypatch.setattr(drv, "_encoding", lambda: NE.PyEncoding(drv.device))
    elif not isinstance(drv._encoding(), NE.CEncoding):
        pytest.fail("wgpu-py's internals changed: the C encoding is off")
    sets = _count_state_sets(monkeypatch, drv) if which == "c" else []
    a, b = torch.randn(50), torch.randn(50)
    x = torchweb.tensor(a.tolist(), device="webgpu")
    y = torchweb.tensor(b.tolist(), device="webgpu")
    torchweb.webgpu.synchronize()
    for _ in range(5):           # one pipeline, one bind group, one uniform slot, five dispatches
        x.add_(y)
    z1, z2 = x * y, y * x        # same pipeline and uniforms, different bindings' order
    torchweb.webgpu.synchronize()
    want = a + 5 * b
    assert_close(x, want)
    assert_close(z1, want * b)
    assert_close(z2, b * want)
    if which == "c":
        assert sets.count("pipeline") <= 3 and sets.count("group") <= 4, sets


def test_a_new_pipeline_keeps_the_bound_group_it_shares(monkeypatch):
    # in-place ops on the same operands: each a different pipeline, one bind group and one
    # uniform slot between them; the pass keeps the group across the pipeline changes
    drv = R.get_runtime().driver
    if drv.name != "native":
        pytest.skip("native driver only")
    if not isinstance(drv._encoding(), NE.CEncoding):
        pytest.fail("wgpu-py's internals changed: the C encoding is off")
    sets = _count_state_sets(monkeypatch, drv)
    a, b = torch.randn(64) + 3, torch.randn(64)
    x = torchweb.tensor(a.tolist(), device="webgpu")
    y = torchweb.tensor(b.tolist(), device="webgpu")
    torchweb.webgpu.synchronize()
    want = a.clone()
    for _ in range(3):
        x.mul_(y)
        x.add_(y)
        x.div_(y)
        x.sub_(y)
        want.mul_(b)
        want.add_(b)
        want.div_(b)
        want.sub_(b)
    torchweb.webgpu.synchronize()
    n = sets.count("dispatch")
    assert n >= 12 and sets.count("pipeline") >= 12 and sets.count("group") < n, sets
    assert_close(x, want, rtol=1e-5, atol=1e-5)


def test_a_failed_flush_forgets_what_the_buffer_held(monkeypatch):
    # if the driver raises during a flush, the uniforms may not have been uploaded: the next
    # flush must upload them rather than trust the buffer
    rt = R.get_runtime()
    a = torch.randn(10, 6)
    x = torchweb.tensor(a.tolist(), device="webgpu")
    torchweb.webgpu.synchronize()
    execute = rt.driver.execute

    def failing(words, blob):
        raise RuntimeError("device lost (simulated)")

    y = x.sum(1)   # (its values are lost with the failed flush: it is dropped below)
    lazy.realize_all()
    monkeypatch.setattr(rt.driver, "execute", failing)
    with pytest.raises(RuntimeError, match="simulated"):
        rt.flush()
    monkeypatch.setattr(rt.driver, "execute", execute)
    assert rt._params_held == b""
    uploads = _params_uploads(monkeypatch)
    assert_close(_flushed(x.sum(1)), a.sum(1))
    assert uploads[0] > 0
    del y
