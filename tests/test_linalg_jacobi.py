"""The Jacobi sweeps behind eigh / eigvalsh / svd / svdvals (backends' jacobi_sweep: webgpu's
kernels/jacobi.py, a round a dispatch or a whole sweep in one for n <= 64; the cpu device's
numpy twin) against PyTorch in float64: sizes 1 to 600, odd and even, batches, ill-conditioned
matrices, repeated and opposite eigenvalues, zero columns; one sweep of the kernel against the
numpy twin; the dispatches of a 256 x 256 eigh."""

import itertools

import pytest
import torch

import torchweb
from oracle import ours, theirs
from torchweb.backends import backend_for
from torchweb.backends.plans import JacobiSweep


def _sym(n, batch=(), seed=0):
    g = torch.Generator().manual_seed(seed)
    M = torch.randn(*batch, n, n, generator=g)
    return M + M.mT


def _with_spectrum(values, seed=0, right=None):
    """Q diag(values) Q^T (or Q diag(values) P^T with `right`) for random orthogonal Q, P (float64)."""
    g = torch.Generator().manual_seed(seed)
    n = len(values)
    Q = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=torch.float64))[0]
    P = Q if right is None else torch.linalg.qr(torch.randn(n, n, generator=g, dtype=torch.float64))[0]
    return Q @ torch.diag(torch.tensor(values, dtype=torch.float64)) @ P.mT


def _rel(got, want):
    return ((theirs(got).double() - want).abs().max() / want.abs().max().clamp_min(1e-30)).item()


def _check_eigh(A, device, tol):
    """Eigenvalues within tol of float64's (relative to the largest); eigenvectors orthonormal
    and with A V = V diag(w) to tol (so any basis of a repeated eigenvalue's space passes)."""
    A64 = A.double()
    w, V = torchweb.linalg.eigh(ours(A, device))
    assert _rel(w, torch.linalg.eigvalsh(A64)) <= tol
    V64, w64 = theirs(V).double(), theirs(w).double()
    n = A.shape[-1]
    eye = torch.eye(n, dtype=torch.float64)
    assert (V64.mT @ V64 - eye).abs().max().item() <= 10 * tol
    scale = A64.abs().amax((-2, -1), keepdim=True).clamp_min(1e-30)
    assert ((A64 @ V64 - V64 * w64.unsqueeze(-2)).abs() / scale).max().item() <= 10 * tol


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 17, 33, 64, 65, 66, 100, 129])
def test_eigh_sizes(device, n):
    _check_eigh(_sym(n, seed=n), device, 2e-6)


@pytest.mark.parametrize("n", [1, 2, 3, 6, 31, 64, 65, 67, 100, 129])
def test_svdvals_sizes(device, n):
    g = torch.Generator().manual_seed(n)
    A = torch.randn(n, n, generator=g)
    assert _rel(torchweb.linalg.svdvals(ours(A, device)), torch.linalg.svdvals(A.double())) <= 1e-6


@pytest.mark.parametrize("shape", [(100, 41), (41, 100), (2, 90, 64), (1, 70)])
def test_svdvals_tall_and_wide(device, shape):
    """(without a gradient: the singular values alone, R of a compact QR first when tall)"""
    g = torch.Generator().manual_seed(sum(shape))
    A = torch.randn(*shape, generator=g)
    assert _rel(torchweb.linalg.svdvals(ours(A, device)), torch.linalg.svdvals(A.double())) <= 1e-6


@pytest.mark.parametrize("n", [201, 256])
def test_large_matrices(device, n):
    A = _sym(n, seed=n)
    assert _rel(torchweb.linalg.eigvalsh(ours(A, device)), torch.linalg.eigvalsh(A.double())) <= 1e-6
    g = torch.Generator().manual_seed(n)
    B = torch.randn(n, n, generator=g)
    assert _rel(torchweb.linalg.svdvals(ours(B, device)), torch.linalg.svdvals(B.double())) <= 1e-6


def test_a_sweep_at_600():
    """(a whole eigh at 600 takes a minute on lavapipe and numpy here: one sweep of each)"""
    _sweep_agrees("eigh", 600, 600, 1)


@pytest.mark.parametrize("batch,n", [((3,), 7), ((2, 3), 6), ((2,), 70), ((4,), 33)])
def test_batches(device, batch, n):
    _check_eigh(_sym(n, batch, seed=n), device, 2e-6)
    g = torch.Generator().manual_seed(n)
    A = torch.randn(*batch, n + 3, n, generator=g)
    U, S, Vh = torchweb.linalg.svd(ours(A, device), full_matrices=False)
    assert _rel(S, torch.linalg.svdvals(A.double())) <= 1e-6
    recon = theirs(U).double() * theirs(S).double().unsqueeze(-2) @ theirs(Vh).double()
    assert (recon - A.double()).abs().max().item() <= 1e-5 * A.abs().max().item()


def test_ill_conditioned(device):
    n = 40
    sv = torch.logspace(0, -7, n, dtype=torch.float64).tolist()
    A = _with_spectrum(sv, seed=1, right=True).float()
    S = theirs(torchweb.linalg.svdvals(ours(A, device))).double()
    want = torch.linalg.svdvals(A.double())
    assert ((S - want).abs() / want[0]).max().item() <= 1e-6
    big = want > 1e-3   # (and relative to themselves, the larger ones)
    assert ((S - want).abs() / want)[big].max().item() <= 1e-4
    E = _with_spectrum([(-1) ** i * v for i, v in enumerate(sv)], seed=2).float()
    _check_eigh(E, device, 2e-6)


@pytest.mark.parametrize("n", [6, 40, 90])
def test_repeated_and_opposite_eigenvalues(device, n):
    values = [float(1 + i % 3) for i in range(n)]   # each three times or more
    _check_eigh(_with_spectrum(values, seed=n).float(), device, 2e-6)
    values = [float((-1) ** i * (1 + i // 2)) for i in range(n)]   # +-1, +-2, ...: |w| repeated
    _check_eigh(_with_spectrum(values, seed=n + 1).float(), device, 2e-6)
    S = torchweb.linalg.svdvals(ours(_with_spectrum(values, seed=n + 2, right=True).float(), device))
    assert _rel(S, torch.tensor(sorted((abs(v) for v in values), reverse=True), dtype=torch.float64)) <= 1e-6


def test_already_diagonal_zero_and_rank_deficient(device):
    D = torch.diag(torch.tensor([3.0, -1.0, 2.0, 0.0, 5.0]))
    w, V = torchweb.linalg.eigh(ours(D, device))
    assert theirs(w).tolist() == [-1.0, 0.0, 2.0, 3.0, 5.0]
    assert theirs(V).abs().sum().item() == 5.0   # (no rotation: a permutation)
    Z = torch.zeros(4, 4)
    assert theirs(torchweb.linalg.eigvalsh(ours(Z, device))).tolist() == [0.0] * 4
    assert theirs(torchweb.linalg.svdvals(ours(Z, device))).tolist() == [0.0] * 4
    g = torch.Generator().manual_seed(3)
    R = torch.randn(70, 3, generator=g) @ torch.randn(3, 70, generator=g)   # rank 3
    S = theirs(torchweb.linalg.svdvals(ours(R, device))).double()
    want = torch.linalg.svdvals(R.double())
    assert ((S - want).abs() / want[0]).max().item() <= 1e-6


def test_the_rounds_pair_every_two_indices_once_a_sweep():
    for N in (2, 4, 6, 66, 130):
        plan = JacobiSweep("eigh", N, N, 1)
        met = [tuple(sorted(pq)) for r in range(N - 1) for pq in plan.pairs(r)]
        assert sorted(met) == list(itertools.combinations(range(N), 2))


def _sweep_agrees(kind, N, length, count, A=None):
    """One sweep of the webgpu kernel and of the cpu twin from the same input: each keeps the
    rotations' product in V (eigh: V A V^T is the result; svd: V W^T is); eigh's agree to
    float32 rounding (the same rounding steps; svd's sum the inner products in another order,
    and a rotation's angle is sensitive where two columns' norms are close: they drift apart)."""
    g = torch.Generator().manual_seed(N + length + count)
    if A is None:
        A = _sym(N, (count,), seed=N) if kind == "eigh" else torch.randn(count, N, length, generator=g)
    A = A.reshape(count, N, length)
    A64 = A.double()
    out = []
    for device in ("cpu", "webgpu"):
        X = ours(torch.stack([A, torch.zeros_like(A)]) if kind == "eigh" else A, device).contiguous()
        V = torchweb.eye(N, device=device).expand(count, N, N).contiguous()
        backend_for(device).jacobi_sweep(JacobiSweep(kind, N, length, count), X, V, 0)
        X, V = theirs(X[1] if kind == "eigh" else X).double(), theirs(V).double()
        turned = V @ A64 @ V.mT if kind == "eigh" else V @ A64
        assert (turned - X).abs().max().item() <= 1e-5 * A.abs().max().item() * N ** 0.5
        out.append((X, V))
    (X0, V0), (X1, V1) = out
    if kind == "eigh":
        assert (X0 - X1).abs().max().item() <= 2e-5 * A.abs().max().item()
        assert (V0 - V1).abs().max().item() <= 2e-5
    return out


@pytest.mark.parametrize("kind,N,length,count", [("eigh", 2, 2, 1), ("eigh", 8, 8, 3), ("eigh", 64, 64, 2),
                                                 ("eigh", 66, 66, 2), ("eigh", 130, 130, 1),
                                                 ("svd", 2, 5, 2), ("svd", 10, 10, 1), ("svd", 64, 64, 3),
                                                 ("svd", 66, 66, 1), ("svd", 130, 130, 2)])
def test_one_sweep_on_webgpu_matches_the_cpu_twin(kind, N, length, count):
    g = torch.Generator().manual_seed(N + length + count)
    A = _sym(N, (count,), seed=N) if kind == "eigh" else torch.randn(count, N, length, generator=g)
    for X, _ in _sweep_agrees(kind, N, length, count, A):   # (the sweep did its work)
        assert _off(X, kind) < 0.7 * _off(A.double(), kind)


def _off(X, kind):
    """eigh: the off-diagonal mass; svd: the rows' squared cosines off the diagonal."""
    if kind == "svd":
        d = X.square().sum(-1).rsqrt()
        X = (X @ X.mT) * d.unsqueeze(-1) * d.unsqueeze(-2)
    return (X - torch.diag_embed(X.diagonal(0, -2, -1))).square().sum()


def test_a_256_eigh_is_a_dispatch_a_round(monkeypatch):
    from torchweb.backends.webgpu.runtime import get_runtime
    A = ours(_sym(256, seed=5), "webgpu")
    torchweb.linalg.eigh(A)[0].sum().item()   # (pipelines made)
    rt = get_runtime()
    jacobi = [pid for key, pid in rt._pipelines.items() if key[:2] == ("jacobi", "eigh")]
    calls = []
    real = rt.record   # (every kernel's dispatch: a[0] its row's head, [1] the pipeline id)
    monkeypatch.setattr(rt, "record", lambda *a, **k: (calls.append(a[0][1]), real(*a, **k))[1])
    torchweb.linalg.eigh(A)[0].sum().item()
    rounds = sum(pid in jacobi for pid in calls)
    sweeps = rounds // 255
    assert rounds == 255 * sweeps and 4 <= sweeps <= 12
    others = len(calls) - rounds   # (setup, a convergence check a sweep, the sort of the results)
    print(f"eigh 256: {sweeps} sweeps, {rounds} round dispatches, {others} others")
    assert others <= 6 * sweeps + 40


@pytest.fixture(params=[True, False], ids=["lavapipe_layout", "gpu_layout"])
def layout(request, monkeypatch):
    """The kernels' layout for a software adapter (a few workgroups of 32 threads) and for a
    GPU (a workgroup of up to 256 threads a pair), both run here."""
    from torchweb.backends.webgpu.runtime import get_runtime
    monkeypatch.setattr(get_runtime(), "software_adapter", request.param)
    return request.param


@pytest.mark.parametrize("kind,N,length,count", [("eigh", 6, 6, 2), ("eigh", 64, 64, 1), ("eigh", 100, 100, 2),
                                                 ("eigh", 258, 258, 1), ("svd", 6, 9, 2), ("svd", 64, 64, 1),
                                                 ("svd", 100, 100, 2), ("svd", 258, 258, 1)])
def test_both_layouts_sweep_alike(layout, kind, N, length, count):
    _sweep_agrees(kind, N, length, count)


@pytest.mark.parametrize("n", [7, 64, 100])
def test_both_layouts_decompose(layout, n):
    A = _sym(n, (2,), seed=n)
    _check_eigh(A, "webgpu", 2e-6)
    assert _rel(torchweb.linalg.svdvals(ours(A, "webgpu")), torch.linalg.svdvals(A.double())) <= 1e-6
