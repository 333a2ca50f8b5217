"""ctc_loss (Connectionist Temporal Classification, Graves et al. 2006), written from primitives.

The targets of each batch entry become the extended label sequence l' of 2 * S + 1 states
(blank, l1, blank, l2, ..., blank), batched over N as an (N, 2S + 1) index tensor. The log
probabilities of those states are gathered once, (T, N, 2S + 1); then the forward (alpha)
recursion runs over time in log space, each step a few elementwise ops on (N, 2S + 1):

    alpha[t, s] = lp[t, l'[s]] + logsumexp(alpha[t-1, s], alpha[t-1, s-1],
                                           alpha[t-1, s-2] where l'[s] != l'[s-2])

A batch entry whose input is shorter than t keeps its alpha (a `where` on a host-built mask),
so after the last step every entry holds its alpha at input_length - 1; the loss is minus the
logsumexp of its last two states (the last one only for an empty target). The logsumexp is
written so that all -inf inputs give -inf with a zero gradient (never 0/0): unreachable states
and impossible alignments (loss inf) then pass no NaN back. The gradient is the primitives'.

PyTorch's own backward (ATen LossCTC.cpp) returns exp(lp) - exp(log(sum alpha beta) + nll - lp):
the true gradient plus exp(lp), a term that vanishes behind a log_softmax but shows on a leaf;
and NaN for every t < input_length of an entry whose loss is inf (unless zero_infinity). The
last step, _CtcLossTerm (CtcLossBackward0, PyTorch's node name), adds that term to the gradient
so log_probs.grad equals PyTorch's on a leaf too. Lengths are read on the host, as PyTorch does.
"""

import math

from ... import _dtype as D
from ..._creation import full, tensor
from ...autograd.function import Function
from ..._is_tensor import is_tensor
from ..index_ops import gather, index_select
from ..join import cat, stack
from ..elementwise import call
from ..registry import define
from .. import reduction as R, shape as S
from . import reduction_name

_WHERE = "(while checking arguments for ctc_loss_allocate_outputs)"
NEG_INF = -math.inf


def _lengths(v, name):
    """A list of ints from a tensor (any shape, read back) or a sequence of ints."""
    if is_tensor(v):
        if v.dtype.is_floating_point or v.dtype is D.bool:
            raise RuntimeError(f"{name} must be integral")
        return [int(x) for x in S.reshape(v, (-1,)).tolist()]
    return [int(x) for x in v]


def _check_length_types(input_lengths, target_lengths):
    ti, tt = is_tensor(input_lengths), is_tensor(target_lengths)
    seq = (list, tuple)
    if ti != tt or (not ti and not (isinstance(input_lengths, seq) and isinstance(target_lengths, seq))):
        raise TypeError("ctc_loss(): input_lengths and target_lengths must both be Tensors or both be tuples "
                        f"of ints, got {type(input_lengths).__name__} and {type(target_lengths).__name__}")
    if not ti:
        for v in list(input_lengths) + list(target_lengths):
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError("ctc_loss(): input_lengths and target_lengths must be tuples of ints, got an "
                                f"element of type {type(v).__name__}")


def _lse(*xs):
    """logsumexp of same-shape tensors, -inf (with a zero gradient) where all are -inf."""
    m = xs[0]
    for x in xs[1:]:
        m = call("maximum", m, x)
    m = call("where", call("eq", m, NEG_INF), 0.0, m).detach()
    s = call("exp", xs[0] - m)
    for x in xs[1:]:
        s = s + call("exp", x - m)
    empty = call("eq", s, 0.0)
    return call("where", empty, NEG_INF, call("log", call("where", empty, 1.0, s)) + m)


def _shift(a, k):
    """a (N, W) moved k places right along dim 1, -inf filling in from the left."""
    n, w = a.shape
    if k >= w:
        return full((n, w), NEG_INF, dtype=a.dtype, device=a.device)
    pad = full((n, k), NEG_INF, dtype=a.dtype, device=a.device)
    return cat([pad, S.narrow(a, 1, 0, w - k)], 1)


class _CtcLossTerm(Function):
    """nll unchanged; backward adds PyTorch's exp(log_probs) term (and its NaN for an infinite
    loss without zero_infinity) to log_probs' gradient, for t < input_length."""
    _backward_name = "CtcLossBackward0"

    @staticmethod
    def forward(ctx, nll, log_probs, valid, zero_infinity):
        ctx.save_for_backward(nll, log_probs, valid)
        ctx.zero_infinity = zero_infinity
        return call("mul", nll, 1.0)

    @staticmethod
    def backward(ctx, g):
        nll, lp, valid = ctx.saved_tensors
        factor = g
        if not ctx.zero_infinity:
            factor = call("where", call("eq", nll, math.inf), math.nan, g)
        factor = call("where", valid, S.reshape(factor, (1, -1, 1)), 0.0)
        return g, call("exp", lp) * factor, None, None


def _check(lp, targets, il, tl, blank):
    if lp.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    if lp.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {lp.dim()}-dimensional tensor for argument #1 "
                           f"'log_probs' {_WHERE}")
    if not 1 <= targets.dim() <= 2:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional tensor for argument "
                           f"#2 'targets' {_WHERE}")
    _, n, c = lp.shape
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    if len(il) != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tl) != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    for v in tl:
        if v < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {v} {_WHERE}")
    if targets.dim() == 1:
        if targets.shape[0] != sum(tl):
            raise RuntimeError(f"Expected tensor to have size {sum(tl)} at dimension 0, but got size "
                               f"{targets.shape[0]} for argument #2 'targets' {_WHERE}")
    else:
        if targets.shape[0] != n:
            raise RuntimeError(f"Expected tensor to have size {n} at dimension 0, but got size {targets.shape[0]} "
                               f"for argument #2 'targets' {_WHERE}")
        if tl and targets.shape[1] < max(tl):
            raise RuntimeError(f"Expected tensor to have size at least {max(tl)} at dimension 1, but got size "
                               f"{targets.shape[1]} for argument #2 'targets' {_WHERE}")
    for v in il:
        if v < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {v} {_WHERE}")
        if v > lp.shape[0]:
            raise RuntimeError(f"Expected input_lengths to have value at most {lp.shape[0]}, but got value {v} "
                               f"{_WHERE}")


def _padded_targets(targets, tl, blank, device):
    """(N, Smax) int64 labels, blank past each entry's length."""
    n, smax = len(tl), max(tl)
    if targets.dim() == 1:
        offsets, pos = [], 0
        for L in tl:
            offsets.append(pos)
            pos += L
        idx = [offsets[b] + min(s, tl[b] - 1) if tl[b] else 0 for b in range(n) for s in range(smax)]
        t = S.reshape(index_select(targets, 0, tensor(idx, dtype=D.int64, device=device)), (n, smax))
    else:
        t = S.narrow(targets, 1, 0, smax)
    keep = tensor([[s < tl[b] for s in range(smax)] for b in range(n)], dtype=D.bool, device=device)
    return call("where", keep, t, blank)


def _ctc_nll(lp, targets, il, tl, blank):
    """The (N,) negative log-likelihoods, differentiable in lp (T, N, C)."""
    T, n, c = lp.shape
    dev, dt = lp.device, lp.dtype
    smax = max(tl) if tl else 0
    w = 2 * smax + 1
    if smax:
        lab = _padded_targets(targets, tl, blank, dev)
        blanks = full((n, smax), blank, dtype=D.int64, device=dev)
        ext = cat([S.reshape(stack([blanks, lab], 2), (n, 2 * smax)), full((n, 1), blank, dtype=D.int64, device=dev)],
                  1)
        allow2 = cat([full((n, 2), False, dtype=D.bool, device=dev),
                      call("ne", S.narrow(ext, 1, 2, w - 2), S.narrow(ext, 1, 0, w - 2))], 1)
    else:
        ext = full((n, 1), blank, dtype=D.int64, device=dev)
        allow2 = None
    tmax = max(il) if il else 0
    steps = max(tmax, 1)
    lpe = gather(S.narrow(lp, 0, 0, steps), 2, S.expand(S.unsqueeze(ext, 0), steps, n, w))   # (steps, N, W)
    start = tensor([[s < 2 and s < 2 * tl[b] + 1 for s in range(w)] for b in range(n)], dtype=D.bool, device=dev)
    alpha = call("where", start, S.select(lpe, 0, 0), NEG_INF)
    if tmax > 1:
        live = tensor([[[t < il[b]] for b in range(n)] for t in range(tmax)], dtype=D.bool, device=dev)
        for t in range(1, tmax):
            a2 = _shift(alpha, 2)
            if allow2 is not None:
                a2 = call("where", allow2, a2, NEG_INF)
            new = S.select(lpe, 0, t) + _lse(alpha, _shift(alpha, 1), a2)
            alpha = call("where", S.select(live, 0, t), new, alpha)
    last = tensor([[2 * L] for L in tl], dtype=D.int64, device=dev)
    ll = gather(alpha, 1, last)
    if smax:
        prev = tensor([[max(2 * L - 1, 0)] for L in tl], dtype=D.int64, device=dev)
        has = tensor([[L > 0] for L in tl], dtype=D.bool, device=dev)
        ll = _lse(ll, call("where", has, gather(alpha, 1, prev), NEG_INF))
    nll = -S.reshape(ll, (n,))
    if any(v == 0 for v in il):   # no input: likelihood 1 for an empty target, else 0
        none = tensor([v == 0 for v in il], dtype=D.bool, device=dev)
        fixed = tensor([0.0 if L == 0 else math.inf for L in tl], dtype=dt, device=dev)
        nll = call("where", none, fixed, nll)
    return nll


def _ctc(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity):
    _check_length_types(input_lengths, target_lengths)
    il = _lengths(input_lengths, "input_lengths")
    tl = _lengths(target_lengths, "target_lengths")
    if not log_probs.dtype.is_floating_point or log_probs.dtype is not D.float32:
        raise NotImplementedError(f'"ctc_loss_cpu" not implemented for \'{log_probs.dtype.word}\'')
    batched = log_probs.dim() == 3
    lp = log_probs if batched else S.unsqueeze(log_probs, 1)
    if targets.device != lp.device:
        targets = targets.to(lp.device)
    if targets.dtype is not D.int64:
        targets = targets.to(D.int64)
    _check(lp, targets, il, tl, blank)
    nll = _ctc_nll(lp, targets, il, tl, blank)
    valid = tensor([[[t < il[b]] for b in range(lp.shape[1])] for t in range(lp.shape[0])], dtype=D.bool,
                   device=lp.device)
    res = _CtcLossTerm.apply(nll, lp, valid, bool(zero_infinity))
    if zero_infinity:
        res = call("where", call("eq", res, math.inf), 0.0, res)
    if reduction == "mean":
        return R.mean(res / tensor([float(max(L, 1)) for L in tl], dtype=res.dtype, device=res.device))
    if reduction == "sum":
        return R.sum(res)
    return res if batched else S.squeeze(res, 0)


@define("ctc_loss", "loss", dtypes=("float32",), method=False, torch=False, functional=True, key="F.ctc_loss",
        doc="ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction='mean', "
            "zero_infinity=False) -> Tensor\n\n"
            "The Connectionist Temporal Classification loss: minus the log of the summed probability of "
            "every alignment of the target to the input. log_probs (T, N, C) or (T, C) holds log-"
            "probabilities (log_softmax over C); targets are padded (N, S) or concatenated 1-d; the "
            "lengths are tensors or tuples of ints. 'mean' divides each loss by its target length "
            "(at least 1), then averages over the batch. Impossible alignments give inf, or 0 with "
            "zero_infinity (and a zero gradient).")
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    return _ctc(log_probs, targets, input_lengths, target_lengths, blank, reduction_name(reduction), zero_infinity)


@define("ctc_loss", "loss", dtypes=("float32",), method=False,
        doc="ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1, "
            "zero_infinity=False) -> Tensor\n\n"
            "torch.nn.functional.ctc_loss with ATen's arguments (reduction as PyTorch's int enum: "
            "0 none, 1 mean, 2 sum).")
def ctc_loss_aten(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1, zero_infinity=False):
    if not isinstance(reduction, int) or isinstance(reduction, bool):
        raise TypeError(f"ctc_loss(): argument 'reduction' must be int, not {type(reduction).__name__}")
    return _ctc(log_probs, targets, input_lengths, target_lengths, blank, reduction_name(reduction), zero_infinity)
