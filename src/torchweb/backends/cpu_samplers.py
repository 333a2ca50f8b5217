"""The cpu device's random_sample (backends/base.py): the webgpu kernels' rejection samplers
(backends/webgpu/kernels/samplers.py) in numpy, step for step in float32 on the same Philox
blocks, so a seed gives the same draws on both devices (but where a comparison falls within
float32 rounding of the GPU's log or cos). Each round runs over the elements not yet accepted:
element i's round r reads block philox(counter=(i, call, r, 0)), four 32-bit words."""

from .. import _philox
from .cpu_arrays import np as _np, view as _view
from .sampling import BTRS_MIN_MEAN, LOG_FACTORIAL, MAX_ROUNDS, PTRS_MIN_RATE, STIRLING_TAIL


def random_sample(draw, out, params):
    """out = draws of draw.kind (gamma, poisson, binomial) at params' elements (see base.py)."""
    n = _np()
    values = [_view(p).reshape(-1).astype(n.float32) for p in params]
    with n.errstate(all="ignore"):
        r = _SAMPLERS[draw.kind](n, _Stream(n, len(values[0]), draw.seed, draw.call), *values)
    n.copyto(_view(out), r.reshape(out.shape), casting="unsafe")


class _Stream:
    """The rounds: each gives the pending elements' indices and their block's uniforms."""

    def __init__(self, n, count, seed, call):
        self.np, self.seed, self.call = n, seed, call
        self.pending = n.arange(count)

    def rounds(self):
        n = self.np
        for r in range(MAX_ROUNDS):
            if not self.pending.size:
                return
            words = _philox.philox_at(n, self.pending, self.seed, self.call, r)
            yield self.pending, (words >> n.uint32(8)).astype(n.float32) * n.float32(2.0 ** -24)

    def accept(self, done):
        self.pending = self.pending[~done]


def _gamma(n, stream, alpha):
    """Marsaglia and Tsang; alpha < 1 draws with alpha + 1 and the boost u^(1/alpha) (PyTorch's
    sample_gamma). A round's words: the normal (Box-Muller on 0 and 1), the test's uniform (2),
    the boost's (3)."""
    f = n.float32
    out = n.full(alpha.shape, n.nan, dtype=n.float32)
    out[alpha == 0] = 0
    small = alpha < 1
    a = n.where(small, alpha + f(1), alpha)
    d = a - f(1.0 / 3.0)
    c = f(1) / n.sqrt(f(9) * d)
    stream.accept(~(alpha > 0))
    for i, u in stream.rounds():
        x = n.sqrt(f(-2) * n.log(u[0] + f(2.0 ** -24))) * n.cos(f(6.283185307179586) * u[1])
        y = f(1) + c[i] * x
        v = y * y * y
        t = f(1) - u[2]
        xx = x * x
        ok = (y > 0) & ((t < f(1) - f(0.0331) * xx * xx) | (n.log(t) < f(0.5) * xx + d[i] * (f(1) - v + n.log(v))))
        g = d[i] * v
        g = n.where(small[i], g * n.exp(n.log(f(1) - u[3]) / alpha[i]), g)
        out[i[ok]] = g[ok]
        stream.accept(ok)
    return n.maximum(out, n.finfo(n.float32).tiny)   # (PyTorch's floor; NaN stays NaN)


def _poisson_log_pmf(n, k, rate):
    """log P(K = k), K ~ Poisson(rate >= 10): for k >= 10 with Stirling's series written around
    k - rate, whose terms stay small (k log(rate) - lgamma(k + 1) cancels in float32)."""
    f = n.float32
    table = n.array(LOG_FACTORIAL, dtype=n.float32)[n.clip(k, 0, 9).astype(n.int64)]
    direct = k * n.log(rate) - rate - table
    kk = n.maximum(k, f(PTRS_MIN_RATE))
    e = kk - rate
    stable = (-(kk * n.log1p(e / rate) - e) - f(0.5) * n.log(f(6.283185307179586) * kk)
              - (f(1.0 / 12.0) - f(1.0 / 360.0) / (kk * kk)) / kk)
    return n.where(k >= PTRS_MIN_RATE, stable, direct)


def _poisson(n, stream, rate):
    """Knuth's product of uniforms below PTRS_MIN_RATE (a round multiplies four), Hörmann's
    PTRS (1993) at and above (a round's words 0 and 1), as PyTorch's sample_poisson."""
    f = n.float32
    out = n.full(rate.shape, n.nan, dtype=n.float32)
    out[rate == 0] = 0
    large = rate >= PTRS_MIN_RATE
    enlam = n.exp(-rate)
    prod = n.ones_like(rate)
    count = n.zeros_like(rate)
    slam = n.sqrt(rate)
    b = f(0.931) + f(2.53) * slam
    a = f(-0.059) + f(0.02483) * b
    log_invalpha = n.log(f(1.1239) + f(1.1328) / (b - f(3.4)))
    vr = f(0.9277) - f(3.6224) / (b - f(2))
    stream.accept(~((rate > 0) & (rate < n.inf)))
    for i, u in stream.rounds():
        done = n.zeros(len(i), dtype=bool)
        for j in range(4):   # Knuth: count the uniforms until their product falls to exp(-rate)
            prod[i] *= n.where(done, f(1), u[j])
            fin = ~done & (prod[i] <= enlam[i])
            count[i] += ~done & ~fin
            done |= fin
        knuth = count[i]
        uu, vv = u[0] - f(0.5), u[1]
        us = f(0.5) - n.abs(uu)
        k = n.floor((f(2) * a[i] / us + b[i]) * uu + rate[i] + f(0.43))
        bound = n.log(vv) + log_invalpha[i] - n.log(a[i] / (us * us) + b[i])
        ptrs_ok = (us > 0) & (((us >= f(0.07)) & (vv <= vr[i]))
                              | ((k >= 0) & ~((us < f(0.013)) & (vv > us))
                                 & (bound <= _poisson_log_pmf(n, n.maximum(k, 0), rate[i]))))
        ok = n.where(large[i], ptrs_ok, done)
        out[i[ok]] = n.where(large[i], k, knuth)[ok]
        stream.accept(ok)
    return out


def _stirling_tail(n, k):
    f = n.float32
    table = n.array(STIRLING_TAIL, dtype=n.float32)[n.clip(k, 0, 9).astype(n.int64)]
    kp1sq = (k + f(1)) * (k + f(1))
    return n.where(k <= 9, table, (f(1.0 / 12.0) - (f(1.0 / 360.0) - f(1.0 / 1260.0) / kp1sq) / kp1sq) / (k + f(1)))


def _binomial(n, stream, count, prob):
    """With p the smaller of prob and 1 - prob (the draw mirrored to count - k for 1 - prob):
    inversion (a round sums four geometric waits) where count p < BTRS_MIN_MEAN, Hörmann's BTRS
    (a round's words 0 and 1) at and above, as PyTorch's sample_binomial. BTRS's bound, log
    f(k) / f(m) by Stirling's series, is written with log1p of small ratios, which float32 keeps
    precise for counts up to 2^24."""
    f = n.float32
    out = n.full(count.shape, n.nan, dtype=n.float32)
    zero = (count <= 0) | (prob <= 0)
    out[zero] = 0
    out[~zero & (prob >= 1)] = count[~zero & (prob >= 1)]
    flip = prob > f(0.5)
    p = n.where(flip, f(1) - prob, prob)
    large = count * p >= f(BTRS_MIN_MEAN)
    logq = n.log1p(-p)
    geom_sum = n.zeros_like(count)
    geoms = n.zeros_like(count)
    stddev = n.sqrt(count * p * (f(1) - p))
    b = f(1.15) + f(2.53) * stddev
    a = f(-0.0873) + f(0.0248) * b + f(0.01) * p
    c = count * p + f(0.5)
    v_r = f(0.92) - f(4.2) / b
    r = p / (f(1) - p)
    alpha = (f(2.83) + f(5.1) / b) * stddev
    m = n.floor((count + f(1)) * p)
    fixed = n.log(r * (count - m + f(1)) / (m + f(1)))
    tails_m = _stirling_tail(n, m) + _stirling_tail(n, count - m)
    stream.accept(~(~zero & (prob < 1) & (count < n.inf)))
    for i, u in stream.rounds():
        done = n.zeros(len(i), dtype=bool)
        for j in range(4):   # inversion: count the geometric waits until their sum passes count
            geom_sum[i] += n.where(done, f(0), n.ceil(n.log(u[j]) / logq[i]))
            fin = ~done & (geom_sum[i] > count[i])
            geoms[i] += ~done & ~fin
            done |= fin
        uu, vv = u[0] - f(0.5), u[1]
        us = f(0.5) - n.abs(uu)
        ci, mi = count[i], m[i]
        k = n.floor((f(2) * a[i] / us + b[i]) * uu + c[i])
        delta = k - mi
        bound = (-(k + f(0.5)) * n.log1p(delta / (mi + f(1))) + (ci - k + f(0.5)) * n.log1p(delta / (ci - k + f(1)))
                 + delta * fixed[i] + tails_m[i] - _stirling_tail(n, k) - _stirling_tail(n, ci - k))
        lv = n.log(vv * alpha[i] / (a[i] / (us * us) + b[i]))
        btrs_ok = (us > 0) & (k >= 0) & (k <= ci) & (((us >= f(0.07)) & (vv <= v_r[i])) | (lv <= bound))
        ok = n.where(large[i], btrs_ok, done)
        k = n.where(large[i], k, geoms[i])
        out[i[ok]] = n.where(flip[i], ci - k, k)[ok]
        stream.accept(ok)
    return out


_SAMPLERS = {"gamma": _gamma, "poisson": _poisson, "binomial": _binomial}
