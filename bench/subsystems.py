"""Issue 20's speed figures: torch.fft.fft of 1M points (real and complex input), 64 x 4096
batched and 256 x 1000 (Bluestein), torch.linalg.solve, solve_triangular and qr of 1024^2,
torch.linalg.svd of 512^2, torchweb (webgpu) against PyTorch (CUDA where present, else CPU) in
one run, each checked against PyTorch's result; ms, best of 3 means of 2 calls (result read back).
The samplers' cases (1M gamma and 1M Poisson draws at mixed parameters) are random: their error is
the relative difference of the draws' means. --only NAME,... runs those cases alone.

    python3 bench/subsystems.py [--out FILE] [--only gamma_1M,poisson_1M]"""

import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import torch  # noqa: E402
import torchweb  # noqa: E402


def _best(fn, sync, repeat=3, inner=2):
    fn()
    sync()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t) / inner)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None)
    a = ap.parse_args()
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    tsync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1 << 20, generator=g)
    n, m = (64, 32) if os.environ.get("SUBSYSTEMS_SMALL") else (1024, 512)   # (small: checking the script)
    if n == 64:
        x = x[:4096]
    xc = torch.complex(x, x.flip(0))
    A = torch.randn(n, n, generator=g) + 32 * torch.eye(n)
    B = torch.randn(n, 8, generator=g)
    S = torch.randn(m, m, generator=g)
    alpha = torch.rand(len(x), generator=g) * 10 + 0.05   # both sides of the alpha < 1 boost
    rate = torch.rand(len(x), generator=g) * 100          # Knuth's product below 10, PTRS above
    cases = {
        "fft_1M_complex": (lambda t, v: t.fft.fft(v[0]), [x]),
        "rfft_1M": (lambda t, v: t.fft.rfft(v[0]), [x]),
        "fft_1M_complex_input": (lambda t, v: t.fft.fft(v[0]), [xc]),
        "fft_64x4096_batched": (lambda t, v: t.fft.fft(v[0].reshape(64, -1)), [xc]),
        "fft_1000_x256_bluestein": (lambda t, v: t.fft.fft(v[0][:256000].reshape(256, -1)), [xc]),
        "linalg_solve_1024_rhs8": (lambda t, v: t.linalg.solve(v[0], v[1]), [A, B]),
        "linalg_solve_triangular_1024_rhs8": (lambda t, v: t.linalg.solve_triangular(v[0], v[1], upper=True), [A, B]),
        "linalg_qr_1024": (lambda t, v: t.linalg.qr(v[0]).R.abs(), [A]),   # (|R|: the signs are the library's)
        "linalg_svd_512": (lambda t, v: t.linalg.svdvals(v[0]), [S]),
        "linalg_eigh_512": (lambda t, v: t.linalg.eigvalsh(v[0] + v[0].mT), [S]),
        "linalg_cholesky_1024": (lambda t, v: t.linalg.cholesky(v[0] @ v[0].mT / 1024 + torch_eye(t, v[0])), [A]),
        "gamma_1M": (lambda t, v: t.distributions.Gamma(v[0], 1.0).sample(), [alpha]),
        "poisson_1M": (lambda t, v: t.distributions.Poisson(v[0]).sample(), [rate]),
    }
    draws = ("gamma_1M", "poisson_1M")
    results = []
    for name, (f, inputs) in cases.items():
        if a.only and name not in a.only.split(","):
            continue
        ours = [torchweb.tensor(v.tolist(), device="webgpu") for v in inputs]
        theirs = [v.to(dev) for v in inputs]
        got = f(torchweb, ours)
        want = f(torch, theirs)
        got_t = torch.tensor((torchweb.view_as_real(got) if got.is_complex() else got).tolist())
        want_t = torch.view_as_real(want.cpu()) if want.is_complex() else want.cpu()
        if name in draws:
            err = ((got_t.double().mean() - want_t.double().mean()).abs() / want_t.double().mean()).item()
        else:
            err = ((got_t - want_t).abs().max() / want_t.abs().max().clamp_min(1e-30)).item()
        tw_s = _best(lambda: f(torchweb, ours).sum().item() if not got.is_complex() else
                     torchweb.view_as_real(f(torchweb, ours)).sum().item(), lambda: None)
        t_s = _best(lambda: f(torch, theirs), tsync)
        row = {"case": name, "torchweb_ms": tw_s * 1e3, "torch_ms": t_s * 1e3, "torch_device": dev,
               "torch_over_torchweb": t_s / tw_s, "max_rel_err": err}
        print(json.dumps(row), flush=True)
        results.append(row)
    out = {"machine": platform.node(), "adapter": torchweb.webgpu.adapter_info(), "torch": torch.__version__,
           "results": results}
    if a.out:
        with open(a.out, "w") as fh:
            json.dump(out, fh, indent=1)


def torch_eye(t, like):
    return t.eye(like.shape[-1], device=like.device)


if __name__ == "__main__":
    main()
