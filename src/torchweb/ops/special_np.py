"""numpy bodies (the cpu device) of the gamma-family and Bessel rows of the elementwise table:
the algorithms of backends/webgpu/kernels/wgsl_special.py in float64, rounded once by the
caller. (np is passed in, as every table body gets it.)"""

import math


def _f(np, a):
    return np.asarray(a, dtype=np.float64)


def lgamma(np, a):
    def one(v):
        try:
            return math.lgamma(v)
        except (ValueError, OverflowError):
            return math.inf
    a = _f(np, a)
    if not a.size:
        return a.copy()
    out = np.vectorize(one, otypes=[np.float64])(a)
    return np.where(np.isinf(a), np.inf, out)


def digamma(np, a):
    x = _f(np, a).copy()
    with np.errstate(all="ignore"):
        res = np.zeros_like(x)
        neg = x < 0
        r = x - np.trunc(x)
        res = np.where(neg, -np.pi / np.tan(np.pi * r), 0.0)
        x = np.where(neg, 1 - x, x)
        for _ in range(10):
            low = x < 10
            res = np.where(low, res - 1 / x, res)
            x = np.where(low, x + 1, x)
        z = 1 / (x * x)
        y = z * (1 / 12 - z * (1 / 120 - z * (1 / 252 - z * (1 / 240 - z * (1 / 132 - z * 691 / 32760)))))
        out = res + np.log(x) - 0.5 / x - y
        a = _f(np, a)
        out = np.where(a == 0, np.copysign(np.inf, -a), out)
        out = np.where((a < 0) & (a == np.floor(a)), np.nan, out)
    return out


def trigamma(np, a):
    x = _f(np, a).copy()
    with np.errstate(all="ignore"):
        low = x < 0.5
        # sin of the float32 product, as PyTorch (its huge values at the poles come from it)
        s = np.sin((np.float32(np.pi) * x.astype(np.float32)).astype(np.float64))
        res = np.where(low, -np.pi ** 2 / (s * s), 0.0)
        x = np.where(low, 1 - x, x)
        for _ in range(6):
            res = res + 1 / (x * x)
            x = x + 1
        ixx = 1 / (x * x)
        res = res + (1 + 1 / (2 * x) + ixx * (1 / 6 - ixx * (1 / 30 - ixx / 42))) / x
    return np.where(low, -res, res)


_BERN = [1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160, -691 / 1307674368000,
         1 / 74724249600, -3617 / 10670622842880000]


def zeta(np, s, q):
    s, q = np.broadcast_arrays(_f(np, s), _f(np, q))
    s, q = s.copy(), q.copy()
    with np.errstate(all="ignore"):
        def powneg(a):
            m = np.exp(-s * np.log(np.abs(a)))
            odd = np.mod(s, 2) == 1
            return np.where((a < 0) & odd, -m, m)
        a = q.copy()
        total = np.zeros_like(q)
        for _ in range(4096):
            low = a < 9
            if not low.any():
                break
            total = np.where(low, total + powneg(a), total)
            a = np.where(low, a + 1, a)
        b = powneg(a)
        total = total + a * b / (s - 1) + 0.5 * b
        f = b / a * s
        ia2 = 1 / (a * a)
        for j, c in enumerate(_BERN):
            if j:
                f = f * (s + 2 * j - 1) * (s + 2 * j) * ia2
            total = total + f * c
        out = total
        out = np.where(np.isinf(q), np.nan, out)
        out = np.where((q <= 0) & (s != np.floor(s)), np.nan, out)
        out = np.where((q <= 0) & (q == np.floor(q)), np.inf, out)
        out = np.where(s < 1, np.nan, out)
        out = np.where(s == 1, np.inf, out)
        out = np.where(np.isnan(s) | np.isnan(q), np.nan, out)
    return out


def polygamma(np, a, n):
    a, n = np.broadcast_arrays(_f(np, a), _f(np, n))
    with np.errstate(all="ignore"):
        fact = np.vectorize(lambda k: float(math.factorial(int(k))) if 0 <= k < 171 else math.inf,
                            otypes=[np.float64])(n) if n.size else n.copy()
        sign = np.where(np.mod(n, 2) == 1, 1.0, -1.0)
        general = sign * fact * zeta(np, n + 1, a)
    return np.where(n == 0, digamma(np, a), np.where(n == 1, trigamma(np, a), general))


def bessel(np, nu, a):
    """I0 (nu = 0) or I1 (nu = 1) in float64; inf gives NaN as PyTorch's float kernels."""
    x0 = _f(np, a)
    x = np.abs(x0)
    with np.errstate(all="ignore"):
        q = 0.25 * x * x
        term = np.ones_like(x) if nu == 0 else 0.5 * x
        total = term.copy()
        for k in range(1, 60):
            term = term * q / (k * (k + nu))
            total = total + term
        mu = 4.0 * nu * nu
        t2, s2 = np.ones_like(x), np.ones_like(x)
        for k in range(1, 12):
            c = 2 * k - 1
            t2 = t2 * -(mu - c * c) / (8 * k * x)
            s2 = s2 + t2
        e = np.exp(x)
        e = np.where(e > 3.4028234663852886e38, np.inf, e)  # float32's exp overflows first, as PyTorch
        big = e * s2 / np.sqrt(2 * np.pi * x)
        r = np.where(x <= 12, total, big)
        r = np.where(np.isinf(x0) | np.isnan(x0), np.nan, r)
    return np.where((x0 < 0) & (nu == 1), -r, r)

