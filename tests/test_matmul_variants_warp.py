"""The warp-tiled matmul kernels (kernels/matmul_warp.py), each forced over what their generator
does differently from the other tiles, against PyTorch CPU: reads clamped into the matrix at the
last rows and columns (M or N of 1, of 4 with vec4 reads along them), K steps in the main loop
with no test and a last partial one (K of 1, below, at and past a K step), all four operand
layouts (x @ W^T reads both tiles along K and stores them transposed), loads that only some
threads make, split-K. (Batches, aliases, grids split over several dispatches, int32 and
float16: test_matmul_kernels.py, whose SOME has a warp variant.)"""

import pytest

import torchweb
from oracle import assert_close, make
from torchweb.backends.webgpu.runtime import get_runtime
from torchweb.backends.webgpu.kernels import matmul_tiles as T

# Every warp variant of the TABLE also runs test_matmul_kernels.test_variant's shapes. Here: two
# with little code (lavapipe compiles each pipeline of w128x128_k16 for ~10 s), and one made for
# the test whose B tile is read by half of its threads (the generator's partial loads), and it
# with split-K.
PARTIAL = T._warp("w64x16_k8_t4x4", 4, 4, 8, 8, (2, 1))
SPLIT = T._warp("w64x16_k8_t4x4_split4", 4, 4, 8, 8, (2, 1), split=4)
FILL = T._warp("w64x16_k8_t4x4_fill", 4, 4, 8, 8, (2, 1), split=16, fill=6)
EDGES = ["w64x64_k8_t4x8", "w64x128_k8", PARTIAL]
TOL = {"rtol": 1e-5, "atol": 1e-4}


@pytest.fixture(autouse=True)
def unforce():
    yield
    T.FORCED = None


def force(name):
    if not torchweb.webgpu.is_available():
        pytest.fail("no WebGPU adapter")
    T.FORCED = name


def gpu(t):
    return torchweb.from_numpy(t.numpy()).to("webgpu")


def layouts(a, b):
    """(ours, PyTorch's) products of a and b in the four layouts: row-major, A transposed (read
    along M), B transposed (x @ W^T: both read along K), both."""
    at, bt = a.t().contiguous(), b.t().contiguous()
    yield gpu(a) @ gpu(b), a @ b
    yield gpu(at).t() @ gpu(b), at.t() @ b
    yield gpu(a) @ gpu(bt).t(), a @ bt.t()
    yield gpu(at).t() @ gpu(bt).t(), at.t() @ bt.t()


def test_variants_tile_as_named():
    for name, v in T.VARIANTS.items():
        if v.ly:
            rows, cols = name[1:].split("_")[0].split("x")
            assert T.tile(v) == (int(rows), int(cols)), name
    assert T.tile(PARTIAL) == (64, 16)


@pytest.mark.parametrize("variant", EDGES, ids=lambda v: getattr(v, "name", v))
def test_edges_and_layouts(variant):
    force(variant)
    v = T.VARIANTS[variant] if isinstance(variant, str) else variant
    # K: 1, less than a step, a step, past it, several (and a partial last one)
    for m, k, n in [(1, 1, 1), (4, 3, 8), (70, v.kt, 4), (131, v.kt + 4, 67), (36, 5 * v.kt + 8, 132)]:
        for ours, want in layouts(make((m, k)), make((k, n))):
            assert_close(ours, want, **TOL)


@pytest.mark.parametrize("variant", [SPLIT], ids=lambda v: v.name)
def test_scalar_reads_and_long_k(variant):
    """Offsets and strides that rule vec4 reads out; a K long enough for the split-K ones."""
    force(variant)
    a, b = make((68, 133)), make((133, 101))
    x, y = gpu(a), gpu(b)
    assert_close(x[1:, 3:] @ y[3:, 1:], a[1:, 3:] @ b[3:, 1:], **TOL)
    assert_close(x[:, 1:] @ y[1:, ::3], a[:, 1:] @ b[1:, ::3], **TOL)
    e, f = make((33, 1104)), make((1104, 47))
    assert_close(gpu(e) @ gpu(f), e @ f, rtol=1e-5, atol=5e-4)


def test_too_big_for_the_device_falls_back(monkeypatch):
    """A variant needing more workgroup memory than the device allows (browsers refuse the
    pipeline) gives way to FALLBACK, unless forced; the product is right either way."""
    from types import SimpleNamespace
    small = SimpleNamespace(driver=SimpleNamespace(limit=lambda name: 16384))
    big = SimpleNamespace(driver=SimpleNamespace(limit=lambda name: 32768))
    w = T.VARIANTS["w128x128_k16"]
    assert T.fitting(small, w) is T.VARIANTS[T.FALLBACK]
    # one that splits K (the weight gradients') keeps splitting
    assert T.fitting(small, T.VARIANTS[T.TABLE["longk"]]) is T.VARIANTS[T.FALLBACK_SPLIT]
    assert T.workgroup_bytes(T.VARIANTS[T.FALLBACK_SPLIT]) <= 16384
    assert T.VARIANTS[T.FALLBACK_SPLIT].split > 1
    # the older tiles too: t128x64_k16_db double-buffers 24 KiB
    assert T.workgroup_bytes(T.VARIANTS["t128x64_k16_db"]) == 24576
    assert T.fitting(small, T.VARIANTS["t128x64_k16_db"]) is T.VARIANTS[T.FALLBACK]
    assert T.workgroup_bytes(T.VARIANTS[T.FALLBACK]) <= 16384
    assert T.fitting(big, w) is w
    assert T.fitting(small, T.VARIANTS["w64x64_k8"]).name == "w64x64_k8"
    rt = get_runtime()
    monkeypatch.setattr(rt.driver, "limit", lambda name: 16384)
    T._PLANS.clear()
    a, b = make((130, 24)), make((24, 70))
    out = torchweb.empty((130, 70), device="webgpu")
    T.run(rt, out, gpu(a), gpu(b), "f32", "w128x128_k16")   # as the TABLE's choice (not forced)
    assert_close(out, a @ b, **TOL)
    grids = [p[1][0][0] for k, p in T._PLANS.items() if k[0].name == "w128x128_k16" and not k[1]]
    assert grids == [(2, 3, 1)], grids   # 64x64 tiles (the fallback's), not 128x128


def test_fill_picks_the_slices_from_the_workgroups():
    """With fill, K is cut into as many slices as keep tiles x slices within fill (and split, and
    K's 256-term slices allow); the sums are right whatever it picks."""
    force(FILL)
    rt = get_runtime()
    # (M, K, N): 64x16 tiles -> slices
    for (m, k, n), want in [((60, 2000, 16), 6), ((120, 2000, 30), 1), ((64, 1100, 16), 4),
                            ((130, 1300, 16), 2), ((60, 300, 10), 1)]:
        a, b = make((m, k)), make((k, n))
        T._PLANS.clear()
        assert_close(gpu(a) @ gpu(b), a @ b, rtol=1e-5, atol=5e-4)
        plans = [p for key, p in T._PLANS.items() if key[0] is FILL]
        assert len(plans) == 1, plans
        tmp_numel = plans[0][2]
        assert (tmp_numel // (m * n) or 1) == want, (m, k, n, tmp_numel)
    assert T.tile(FILL) == (64, 16)
    # split-K and fill leave the kernel as it is: one pipeline for the variants differing in them
    assert T._plan(rt, torchweb.empty((64, 16), device="webgpu"), gpu(make((64, 8))),
                   gpu(make((8, 16))), "f32", FILL)[0] == \
        T._plan(rt, torchweb.empty((64, 16), device="webgpu"), gpu(make((64, 8))),
                gpu(make((8, 16))), "f32", FILL._replace(name="x", split=1, fill=0))[0]
