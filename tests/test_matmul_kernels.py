"""Every matmul kernel variant (kernels/matmul_tiles.py, its barrier-free ones in
matmul_direct.py, and 'mm2', the original), forced on awkward shapes against PyTorch CPU: sizes
around the tiles, K=0, transposed and offset views (vec4 and scalar loads), broadcast batches,
grids split over several dispatches, split-K, int32 and float16."""

import pytest
import torch

import torchweb
from oracle import assert_close, make
from torchweb.backends.webgpu import backend as G
from torchweb.backends.webgpu.runtime import get_runtime
from torchweb.backends.webgpu.kernels import matmul_tiles as T

NAMES = ["mm2"] + list(T.VARIANTS)
# barrier-free kernels (matmul_direct.py): the one SwiftShader runs, and a smaller one with the
# same generator paths that lavapipe compiles in a tenth of the time (used past test_variant)
DIRECT = [T.SOFTWARE_VARIANTS["swiftshader"], "d8x8_w4x4_k4"]
# The tests past the first run on a subset that still covers every code path of the generator:
# each tile shape, scalar and vec4 loads, double buffering, split-K and f16 accumulation, and
# the warp-tiled generator (matmul_warp.py; its edges: test_matmul_variants_warp.py).
SOME = ["mm2", "t128x128_k8_db", "t64x64_k16_split", "d8x8_w4x4_k4", "w64x64_k8_t4x8"]
TOL = {"rtol": 1e-5, "atol": 1e-4}


def force(name):
    if not torchweb.webgpu.is_available():
        pytest.fail("no WebGPU adapter")
    T.FORCED = name


@pytest.fixture(autouse=True)
def unforce():
    yield
    T.FORCED = None


def gpu(t):
    return torchweb.from_numpy(t.numpy()).to("webgpu")


@pytest.mark.parametrize("variant", NAMES)
def test_variant(variant):
    """Sizes around the tiles; transposed operands (contiguous along M or N) aligned to 4 (vec4
    loads) and not; offsets; a strided view; long K (split by the split-K variants, summed by a
    second kernel). Few distinct pipelines: lavapipe takes up to seconds to compile each."""
    force(variant)
    for m, k, n in [(1, 1, 1), (3, 5, 63), (65, 127, 129), (129, 65, 3)]:
        a, b = make((m, k)), make((k, n))
        assert_close(gpu(a) @ gpu(b), a @ b, **TOL)
    a, b = make((68, 132)), make((132, 100))
    x, y = gpu(a), gpu(b)
    xt, yt = gpu(a.t().contiguous()).t(), gpu(b.t().contiguous()).t()
    assert_close(x @ y, a @ b, **TOL)                                      # vec4 along K and N
    assert_close(xt @ yt, a @ b, **TOL)                                    # vec4 along M and K
    assert_close(x[4:, 8:] @ y[8:, 4:], a[4:, 8:] @ b[8:, 4:], **TOL)      # offsets: multiples of 4
    assert_close(x[1:, 3:] @ y[3:, 1:], a[1:, 3:] @ b[3:, 1:], **TOL)      # not: scalar loads
    assert_close(x[:, 1:] @ y[1:, ::3], a[:, 1:] @ b[1:, ::3], **TOL)      # stride 3
    e, f = make((33, 1101)), make((1101, 47))
    assert_close(gpu(e) @ gpu(f), e @ f, rtol=1e-5, atol=5e-4)           # long K


@pytest.mark.parametrize("variant", DIRECT)
def test_direct_edges(variant):
    """The barrier-free kernel takes K in steps of 4 (the last K % 4 one at a time) and clamps
    the rows and columns it reads into the matrix for blocks past its last row or column."""
    force(variant)
    for m, k, n in [(8, 7, 12), (17, 6, 70), (70, 9, 17)]:
        a, b = make((m, k)), make((k, n))
        assert_close(gpu(a) @ gpu(b), a @ b, **TOL)
        assert_close(gpu(a.t().contiguous()).t() @ gpu(b.t().contiguous()).t(), a @ b, **TOL)


def test_software_variant_by_adapter():
    """SwiftShader (native or in Chromium) gets the barrier-free kernel, other CPUs the tile."""
    from types import SimpleNamespace
    for info, want in [({"architecture": "swiftshader", "vendor": "google"}, "swiftshader"),
                       ({"vendor": "SwiftShader driver", "device": "SwiftShader Device (Subzero)"}, "swiftshader"),
                       ({"vendor": "Mesa", "device": "llvmpipe (LLVM 19.1.7, 256 bits)"}, "other"),
                       ({}, "other")]:
        rt = SimpleNamespace(driver=SimpleNamespace(adapter_info=info))
        assert T.software_variant(rt) == T.SOFTWARE_VARIANTS[want], info
        assert bool(T.VARIANTS[T.software_variant(rt)].wx) == (want == "swiftshader")   # barrier-free
    assert T.choose(512, 512, 512, 1, software=True) == T.SOFTWARE_VARIANT
    force(T.SOFTWARE_VARIANT)   # run() resolves it for this adapter
    a, b = make((40, 30)), make((30, 50))
    assert_close(gpu(a) @ gpu(b), a @ b, **TOL)


@pytest.mark.parametrize("variant", SOME)
def test_batches_and_aliases(variant):
    force(variant)
    a = make((68, 132))
    x = gpu(a)
    assert_close(x[:, :67] @ x.t()[:67, 1:], a[:, :67] @ a.t()[:67, 1:], **TOL)   # one buffer
    c, d = make((3, 1, 33, 20)), make((1, 4, 17, 20))
    assert_close(torchweb.matmul(gpu(c), gpu(d).transpose(-1, -2)),
                 torch.matmul(c, d.transpose(-1, -2)), **TOL)             # broadcast batch


@pytest.mark.parametrize("variant", SOME)
def test_grid_split(variant, monkeypatch):
    """Grids past the adapter's workgroups per dimension go in several dispatches: the limit is
    lowered to 2 so that x, y and the batch each need several (with the real limit, 65535 in
    browsers, a big batch takes ~30 s on lavapipe)."""
    force(variant)
    a, b = make((5, 140, 30)), make((5, 30, 150))
    x, y = gpu(a), gpu(b)
    monkeypatch.setattr(get_runtime(), "max_workgroups", 2)
    assert_close(torchweb.bmm(x, y), torch.bmm(a, b), **TOL)


@pytest.mark.parametrize("variant", SOME)
def test_k_zero(variant):
    """K=0 reaches the kernel only from the backend (matmul fills zeros itself): still zeros."""
    force(variant)
    a, b = torchweb.empty((70, 0), device="webgpu"), torchweb.empty((0, 130), device="webgpu")
    out = torchweb.full((70, 130), 7.0, device="webgpu")
    G.matmul(out, a, b, "f")
    assert_close(out, torch.zeros(70, 130))


@pytest.mark.parametrize("variant", SOME)
def test_int32(variant):
    force(variant)
    a, b = make((65, 600), torch.int32, -9, 9), make((600, 68), torch.int32, -9, 9)
    assert_close(gpu(a) @ gpu(b), a @ b)
    assert_close(gpu(a)[1:] @ gpu(b)[:, 4:], a[1:] @ b[:, 4:])


@pytest.mark.parametrize("variant", SOME + ["t128x128_k16_acc16", "t128x64_k16_acc16"])
def test_float16(variant):
    force(variant)
    if "shader-f16" not in get_runtime().features:
        pytest.skip("adapter without shader-f16")
    a, b = make((65, 72), torch.float16, -2, 2), make((72, 132), torch.float16, -2, 2)
    expected = (a.float() @ b.float()).half()
    # f32 accumulation: one rounding; acc16 variants round every partial sum (~K ulp of f16)
    tol = {"rtol": 2e-2, "atol": 0.5} if variant.endswith("acc16") else {"rtol": 2e-3, "atol": 2e-2}
    assert_close(gpu(a) @ gpu(b), expected, **tol)
    assert_close(gpu(a.t().contiguous()).t() @ gpu(b)[:, 3:], expected[:, 3:], **tol)
