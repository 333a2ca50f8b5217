"""The backend's fft primitive (webgpu: Stockham passes, kernels/fft_stockham.py; cpu: numpy.fft)
as an autograd op on pair tensors. The unnormalized transform F_s (s the sign) is symmetric,
so for a real loss the gradient of its input is F_-s of the output's gradient (of a real input,
that gradient's real part): the backward is a transform too, and differentiable again."""

from .. import _dtype as D
from ..autograd.function import Function
from ..backends import backend_for
from ..backends.plans import FFTSpec
from ..ops.operands import empty


def fits(x, n):
    """Whether x's device transforms n points in one primitive call."""
    return backend_for(x.device.type).fft_fits(n)


def transform(x, sign, real=False, n=None):
    """The unnormalized DFT (sign -1 forward, +1 inverse) along dim -2 of the pairs x (..., m, 2),
    or along dim -1 of real x (..., m), zero-padded to n >= m points (m by default): pairs
    (..., n, 2)."""
    return _Transform.apply(x, sign, real, n)


class _Transform(Function):
    _backward_name = "FftC2CBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, x, sign, real, n):
        m = x.shape[-1 if real else -2]
        ctx.meta = (sign, real, m)
        return _run(x, sign, real, m if n is None else n)

    @staticmethod
    def backward(ctx, g):
        sign, real, m = ctx.meta
        gx = transform(g, -sign)
        if gx.shape[-2] > m:   # (the zero padding's points have no input)
            gx = gx.narrow(-2, 0, m)
        return (gx.select(-1, 0) if real else gx), None, None, None


def _run(x, sign, real, n):
    tail = 1 if real else 2
    lead = tuple(x.shape[:-tail])
    batch = _batch_view(x, tail)
    out = empty(lead + (n, 2), D.float32, x.device)
    shape = tuple(batch.shape[:2]) + (n, 2)
    into = out._view(shape, (shape[1] * 2 * n, 2 * n, 2, 1), 0)
    backend_for(x.device.type).fft(FFTSpec(n, sign, real), into, batch)
    return out


def _batch_view(x, tail):
    """x as (B1, B2, n[, 2]) sharing its storage where its leading dims merge into two (else a
    contiguous copy): what the primitive reads."""
    if x.dtype is not D.float32:
        x = x.float()
    if any(s < 0 for s in x._stride) or (tail == 2 and x._stride[-1] != 1):
        x = x.contiguous()
    dims = _merged(x.shape[:-tail], x._stride[:-tail])
    if len(dims) > 2:
        x = x.contiguous()
        dims = _merged(x.shape[:-tail], x._stride[:-tail])
    dims = [(1, 0)] * (2 - len(dims)) + dims
    shape = tuple(d[0] for d in dims) + tuple(x.shape[-tail:])
    stride = tuple(d[1] for d in dims) + tuple(x._stride[-tail:])
    return x._view(shape, stride, x._offset)


def _merged(shape, stride):
    """[(size, stride)] of the dims, size-1 dims left out and neighbours merged where one stride
    steps over the other's whole extent."""
    dims = []
    for size, st in zip(shape, stride):
        if size == 1:
            continue
        if dims and dims[-1][1] == st * size:
            dims[-1] = (dims[-1][0] * size, st)
        else:
            dims.append((size, st))
    return dims
