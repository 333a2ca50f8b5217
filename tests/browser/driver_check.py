# Checks of the browser driver on its own (no op of torchweb involved): run in the page by
# site/tests.html before the recorded cases, in the same interpreter (runPythonAsync). It
# defines run_driver_checks(), whose JSON summary is {"adapter", "passed": [...], "failed": [[name, message]]}.
import json
import struct
import traceback
from array import array

from torchweb.backends.webgpu import runtime as R
from torchweb.backends.webgpu.driver_browser import init_async

SCALE = """
struct P { n: u32, scale: f32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) nw: vec3u) {
  let i = g.y * nw.x * 64u + g.x;
  if (i < p.n) { o[i] = a[i] * p.scale; }
}"""


def f32s(xs):
    return array("f", xs).tobytes()


def values(data, n):
    return memoryview(data).cast("f")[:n].tolist()


def scale(rt, src, dst, n, k, grid=None):
    pid = rt.pipeline(("check-scale",), lambda: SCALE, ["uniform", "read", "write"])
    params = struct.pack("<If", n, k)
    rt.dispatch(pid, grid or rt.grid(-(-n // 64)), [src, dst], params)


async def check_roundtrip(rt):
    a, b = rt.alloc(4 * 100), rt.alloc(4 * 100)
    rt.upload(a[0], 0, f32s(range(100)))
    scale(rt, a, b, 100, 3.0)
    want = [3.0 * i for i in range(100)]
    assert values(rt.read(b[0], 0, 400), 100) == want, "sync read"
    assert values(await rt.read_async(b[0], 0, 400), 100) == want, "async read"
    assert values(rt.read(b[0], 40, 8), 2) == [30.0, 33.0], "read at an offset"


async def check_write_order(rt):
    # Two uploads into one buffer in one flush, a dispatch reading it between them.
    a, b, c = rt.alloc(64), rt.alloc(64), rt.alloc(64)
    rt.upload(a[0], 0, f32s([1.0] * 16))
    scale(rt, a, b, 16, 2.0)
    rt.upload(a[0], 0, f32s([5.0] * 16))
    scale(rt, a, c, 16, 2.0)
    rt.copy(c[0], 0, a[0], 0, 16)     # COPY after the dispatch, then read a
    assert values(rt.read(b[0], 0, 64), 16) == [2.0] * 16, "write after dispatch leaked back"
    assert values(rt.read(c[0], 0, 64), 16) == [10.0] * 16, "second write lost"
    assert values(rt.read(a[0], 0, 64), 16) == [10.0] * 4 + [5.0] * 12, "copy"


async def check_many_dispatches(rt):
    # More dispatches than one flush holds, chained: the params buffer grows and is re-created.
    a, b = rt.alloc(64), rt.alloc(64)
    rt.upload(a[0], 0, f32s([1.0] * 16))
    for i in range(1500):
        scale(rt, a if i % 2 == 0 else b, b if i % 2 == 0 else a, 16, 1.0 if i % 3 else -1.0)
    got = values(rt.read(a[0], 0, 64), 16)
    assert got == [1.0] * 16, got


async def check_odd_write(rt):
    a = rt.alloc(8)
    rt.upload(a[0], 0, b"\x01\x02\x03\x04\x05\x06")   # 6 bytes: f16 tensors of odd length
    assert bytes(rt.read(a[0], 0, 8))[:6] == b"\x01\x02\x03\x04\x05\x06"


async def check_2d_grid(rt):
    n = 64 * 5
    a, b = rt.alloc(4 * n), rt.alloc(4 * n)
    rt.upload(a[0], 0, f32s(range(n)))
    scale(rt, a, b, n, 0.5, grid=(3, 2, 1))   # 6 workgroups folded as 3 x 2
    assert values(rt.read(b[0], 0, 4 * n), n) == [0.5 * i for i in range(n)]


async def check_bad_wgsl(rt):
    try:
        rt.pipeline(("check-bad",), lambda: "fn main() { let x: f32 = ; }", ["write"])
    except RuntimeError as e:
        assert "WGSL" in str(e) or "error" in str(e).lower(), str(e)
    else:
        raise AssertionError("invalid WGSL did not raise")


async def check_device_state(rt):
    s = rt.driver.device_state()
    assert s == {"errors": [], "lost": None}, s
    st = rt.driver.stats()
    assert st["buffers"] >= 1 and st["pipelines"] >= 1, st


async def check_no_leaks(rt):
    # execute() must destroy its memoryview proxies and release the buffers JS borrowed:
    # a leak keeps a reference to the array, a missing release() keeps the bytearray locked.
    import sys
    rt.flush()
    words, blob = array("I", [R.commands.DESTROY, 999999]), bytearray(b"1234")
    before = sys.getrefcount(words), sys.getrefcount(blob)
    for _ in range(3):
        rt.driver.execute(words, blob)
    assert (sys.getrefcount(words), sys.getrefcount(blob)) == before, "a proxy leaked"
    blob.extend(b"more")   # BufferError if JS still holds the buffer


async def check_read_paths(rt):
    # read() hands back the mapped bytes and readDone() unmaps them: no view stays mapped after
    # sync, async, concurrent or failed reads; read_many packs ranges into one round trip; a
    # read's copy rides in the flush before it, and a hinted flush that no read follows is
    # submitted anyway (next call or microtask), its work not lost.
    import asyncio
    d = rt.driver
    a, b = rt.alloc(4 * 64), rt.alloc(4 * 64)
    rt.upload(a[0], 0, f32s(range(64)))
    scale(rt, a, b, 64, 2.0)
    rt.flush()
    got = d.read_many(((b[0], 8, 8), (a[0], 0, 12), (b[0], 0, 0)))
    assert [values(got[0], 2), values(got[1], 3), bytes(got[2])] == [[4.0, 6.0], [0.0, 1.0, 2.0], b""], got
    got = await asyncio.gather(*(rt.read_async(b[0], 4 * i, 4) for i in range(5)))
    assert [values(g, 1)[0] for g in got] == [0.0, 2.0, 4.0, 6.0, 8.0], got
    try:
        d.read(987654, 0, 4)
        raise AssertionError("a read of an unknown buffer did not raise")
    except RuntimeError as e:
        assert "unknown buffer" in str(e), e
    scale(rt, a, b, 64, 3.0)
    d.read_follows()
    rt.flush()            # held for a read that never comes: the next call submits it
    assert d.stats()["heldEncoder"], d.stats()
    assert values(rt.read(a[0], 0, 4), 1) == [0.0] and values(rt.read(b[0], 252, 4), 1) == [189.0]
    scale(rt, a, b, 64, 4.0)
    d.read_follows()
    rt.flush()
    await asyncio.sleep(0)   # back to JS: the microtask submits it
    assert not d.stats()["heldEncoder"], d.stats()
    assert values(rt.read(b[0], 252, 4), 1) == [252.0]
    st = d.stats()
    assert st["mappedReads"] == 0 and not st["heldEncoder"], st
    assert d.device_state()["errors"] == [], d.device_state()


async def check_without_jspi(rt):
    # Plain runPython cannot block: readback must raise an error that names the awaitable
    # form, and the awaitable form must still work afterwards.
    import pyodide_js
    code = ("import pyodide.ffi, torchweb as t\n"
            "x = t.ones(3, device='webgpu') * 2\n"
            "try:\n    x.tolist(); msg = 'no error'\n"
            "except RuntimeError as e:\n    msg = str(e)\n"
            "(pyodide.ffi.can_run_sync(), msg)")
    can, msg = pyodide_js.runPython(code)
    assert can is False, "nested runPython should not be able to block"
    assert "tolist_async" in msg, msg
    import torchweb as t
    assert await (t.ones(3, device="webgpu") * 2).tolist_async() == [2.0, 2.0, 2.0]


async def check_gradient_ownership(rt):
    # autograd/engine.py takes a leaf's unshared first gradient without a copy, judging
    # "unshared" by sys.getrefcount, whose counts differ across Python versions: on this
    # Python (Pyodide's) the unshared ones must be taken and the shared one copied.
    import torchweb as t
    from torchweb.autograd import engine
    assert engine._ONE_HOLDER is not None, "refcounts do not tell one holder from two here"
    copied = []
    orig = engine.accumulate_grad

    def counting(var, g):
        copied.append(var)
        return orig(var, g)
    engine.accumulate_grad = counting
    try:
        x = t.ones(2, 3, device="webgpu", requires_grad=True)
        w = t.ones(3, 2, device="webgpu", requires_grad=True)
        (x @ w).sum().backward()
        assert not copied, "matmul gradients were copied"
        a = t.ones(4, device="webgpu", requires_grad=True)
        b = t.ones(4, device="webgpu", requires_grad=True)
        (a + b).sum().backward()   # one tensor given to both: copied
        assert len(copied) == 2, len(copied)
    finally:
        engine.accumulate_grad = orig
    a.grad.add_(1.0)
    assert await b.grad.tolist_async() == [1.0] * 4
    assert await w.grad.tolist_async() == [[2.0, 2.0]] * 3


async def check_window_binding(rt):
    # Windows of buffers (tensors past the binding limit, backends/webgpu/windows.py): bytes
    # [1024, 1280) of a bound as the kernel's input, bytes [512, 768) of b as its output; past
    # a lowered limit a whole-buffer binding is refused before it is recorded, the device fine.
    a, b = rt.alloc(4 * 1024), rt.alloc(4 * 1024)
    rt.upload(a[0], 0, f32s(range(1024)))
    rt.upload(b[0], 0, f32s([0.0] * 1024))
    scale(rt, (rt.window(a[0], 1024), 256), (rt.window(b[0], 512), 256), 64, 2.0)
    got = values(rt.read(b[0], 0, 4096), 1024)
    assert got[128:192] == [2.0 * i for i in range(256, 320)], got[128:192]
    assert got[:128] == [0.0] * 128 and got[192:] == [0.0] * 832, "wrote outside its window"
    saved = rt.max_binding
    rt.set_binding_limit(2048)
    try:
        scale(rt, a, b, 1024, 1.0)
        raise AssertionError("a binding past the lowered limit was not refused")
    except RuntimeError as e:
        assert "maxStorageBufferBindingSize" in str(e), str(e)
    finally:
        rt.set_binding_limit(saved)
    scale(rt, a, b, 1024, 1.0)
    assert values(rt.read(b[0], 0, 4096), 1024) == [float(i) for i in range(1024)]


async def check_split_past_binding_limit(rt):
    # torchweb's split paths in the page (tests/test_binding_limit.py has them against
    # PyTorch natively): the limit lowered to 64 KiB, a 300 x 64 table (77 KB) whose row i
    # holds i, gathered, multiplied as a linear layer's weight, summed and scaled, indexed and
    # layer-normed.
    import torchweb as t
    saved = rt.max_binding
    rt.set_binding_limit(64 << 10)
    try:
        w = t.arange(300.0, device="webgpu").view(300, 1).expand(300, 64).contiguous()
        rows = t.nn.functional.embedding(t.tensor([0, 299, 150], device="webgpu"), w)
        assert await rows[:, 0].tolist_async() == [0.0, 299.0, 150.0]
        logits = t.ones(2, 64, device="webgpu") @ w.t()
        assert await logits[1, ::100].tolist_async() == [0.0, 6400.0, 12800.0]
        assert await (w * 2 + 1).sum().item_async() == 2 * 64 * 44850 + 300 * 64
        assert await w.sum(0)[:2].tolist_async() == [44850.0, 44850.0]
        # index gathers/scatters over windows of the table, layer_norm by blocks of rows
        assert await w.index_select(0, t.tensor([0, 299, 150], device="webgpu"))[:, 0].tolist_async() == [0.0, 299.0, 150.0]
        w2 = w.clone().index_add_(0, t.tensor([299, 0], device="webgpu"), t.ones(2, 64, device="webgpu"))
        assert await w2[::299, 5].tolist_async() == [1.0, 300.0]
        y = t.nn.functional.layer_norm(w + t.arange(64.0, device="webgpu"), (64,))
        first, last = await y[0].tolist_async(), await y[299].tolist_async()
        want0 = -31.5 / (341.25 + 1e-5) ** 0.5   # (j - mean) / std of 0..63, every row alike
        assert abs(first[0] - want0) < 1e-4 and max(abs(p - q) for p, q in zip(first, last)) < 1e-4, (first[:3], last[:3])
    finally:
        rt.set_binding_limit(saved)


async def check_warp_matmul(rt):
    # The matmul kernels the TABLE picks on a GPU (kernels/matmul_warp.py) through the browser's
    # WGSL compiler: forced, as SwiftShader would run the barrier-free kernel. Small integers:
    # every product and sum is exact. Row-major operands and x @ W^T (both read along K).
    import torchweb as t
    from torchweb.backends.webgpu.kernels import matmul_tiles as T
    names = sorted({v for v in T.TABLE.values() if T.VARIANTS[v].ly and T.VARIANTS[v].split == 1})
    a = [[(i * 3 + k) % 5 - 2.0 for k in range(20)] for i in range(33)]
    b = [[(k * 7 + j) % 3 - 1.0 for j in range(24)] for k in range(20)]
    want = [[sum(a[i][k] * b[k][j] for k in range(20)) for j in range(24)] for i in range(33)]
    bt = [list(r) for r in zip(*b)]
    try:
        for name in names:
            T.FORCED = name
            x = t.tensor(a, device="webgpu")
            assert await (x @ t.tensor(b, device="webgpu")).tolist_async() == want, name
            assert await (x @ t.tensor(bt, device="webgpu").t()).tolist_async() == want, name
    finally:
        T.FORCED = None


CHECKS = [check_roundtrip, check_write_order, check_many_dispatches, check_odd_write,
          check_2d_grid, check_bad_wgsl, check_device_state, check_no_leaks, check_read_paths,
          check_without_jspi, check_gradient_ownership, check_window_binding,
          check_split_past_binding_limit, check_warp_matmul]


async def run_driver_checks():
    info = await init_async()
    rt = R.get_runtime()
    out = {"adapter": info, "limits": rt.driver.limits, "features": sorted(rt.features),
           "passed": [], "failed": []}
    for check in CHECKS:
        try:
            await check(rt)
            out["passed"].append(check.__name__)
        except Exception:
            out["failed"].append([check.__name__, traceback.format_exc(limit=3)])
    return json.dumps(out)

