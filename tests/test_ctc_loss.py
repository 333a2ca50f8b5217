"""ctc_loss (ops/composite/ctc.py) against PyTorch on both devices: the loss and the gradient of
log_probs (a leaf, so PyTorch's exp(log_probs) term shows) or of logits through log_softmax,
for several T/N/C/S, repeated labels, empty targets, padded and concatenated targets, lengths
as tuples or tensors, each reduction, blank not 0, impossible alignments (inf, NaN gradients)
and zero_infinity; bad input raises PyTorch's exception types."""

import math

import pytest
import torch

import torchweb
import torchweb.nn.functional  # noqa: F401
from oracle import assert_close, check, ours
from test_autograd_ops import NoGrad, run_case


def F(m):
    return m.nn.functional


def logp(t, n, c, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(t, n, c, generator=g).log_softmax(2)


def padded(rows, width):
    return torch.tensor([r + [0] * (width - len(r)) for r in rows])


def concat(rows):
    return torch.tensor([v for r in rows for v in r], dtype=torch.long)


ROWS = [[1, 2, 2], [3, 3], [], [4, 1, 4]]
LENS = tuple(len(r) for r in ROWS)

# name: (fn(T, *inputs, reduction), input maker)
CASES = {
    "padded": (lambda T, x, t, r: F(T).ctc_loss(x, t, (7, 6, 7, 5), LENS, reduction=r),
               lambda: (logp(7, 4, 5), NoGrad(padded(ROWS, 3)))),
    "concatenated": (lambda T, x, t, r: F(T).ctc_loss(x, t, (7, 6, 7, 5), LENS, reduction=r),
                     lambda: (logp(7, 4, 5, 1), NoGrad(concat(ROWS)))),
    "tensor_lengths": (lambda T, x, t, il, tl, r: F(T).ctc_loss(x, t, il, tl, reduction=r),
                       lambda: (logp(7, 4, 5, 2), NoGrad(padded(ROWS, 5)), NoGrad(torch.tensor([7, 7, 3, 6])),
                                NoGrad(torch.tensor(LENS)))),
    "int32_lengths_targets": (lambda T, x, t, il, tl, r: F(T).ctc_loss(x, t, il, tl, reduction=r),
                              lambda: (logp(6, 4, 5, 3), NoGrad(concat(ROWS).int()),
                                       NoGrad(torch.tensor([6, 5, 4, 6], dtype=torch.int32)),
                                       NoGrad(torch.tensor(LENS, dtype=torch.int32)))),
    "repeats_tight": (lambda T, x, t, r: F(T).ctc_loss(x, t, (5, 7, 4), (3, 4, 2), reduction=r),
                      # 1 1 1 needs 5 steps; 2 2 3 3 needs 6; 2 2 needs 3
                      lambda: (logp(7, 3, 4, 4), NoGrad(padded([[1, 1, 1], [2, 2, 3, 3], [2, 2]], 4)))),
    "all_empty_targets": (lambda T, x, t, r: F(T).ctc_loss(x, t, (4, 2), (0, 0), reduction=r),
                          lambda: (logp(4, 2, 3, 5), NoGrad(torch.zeros(2, 0, dtype=torch.long)))),
    "blank_last": (lambda T, x, t, r: F(T).ctc_loss(x, t, (8, 8, 6), (3, 2, 4), blank=4, reduction=r),
                   lambda: (logp(8, 3, 5, 6), NoGrad(padded([[0, 0, 1], [3, 2], [1, 2, 3, 0]], 4)))),
    "blank_middle_in_targets": (lambda T, x, t, r: F(T).ctc_loss(x, t, (6, 6), (2, 3), blank=2, reduction=r),
                                lambda: (logp(6, 2, 4, 7), NoGrad(padded([[0, 1], [3, 3, 1]], 3)))),
    "unnormalized": (lambda T, x, t, r: F(T).ctc_loss(x, t, (5, 4), (2, 1), reduction=r),
                     lambda: (torch.randn(5, 2, 4), NoGrad(padded([[1, 3], [2]], 2)))),
    "through_log_softmax": (lambda T, x, t, r: F(T).ctc_loss(F(T).log_softmax(x, 2), t, (9, 7, 8), (4, 3, 2),
                                                             reduction=r),
                            lambda: (torch.randn(9, 3, 6) * 2, NoGrad(padded([[5, 1, 1, 2], [3, 4, 3], [2, 2]], 4)))),
    "non_contiguous": (lambda T, x, t, r: F(T).ctc_loss(x.transpose(0, 1), t, (6, 5), (3, 2), reduction=r),
                       lambda: (logp(2, 6, 5, 8), NoGrad(padded([[1, 2, 3], [4, 4]], 3)))),
    "zero_input_length": (lambda T, x, t, r: F(T).ctc_loss(x, t, (0, 5, 0), (0, 2, 1), reduction=r),
                          lambda: (logp(5, 3, 4, 9), NoGrad(padded([[], [1, 2], [3]], 2)))),
    "impossible": (lambda T, x, t, r: F(T).ctc_loss(x, t, (3, 6), (3, 2), reduction=r),
                   lambda: (logp(6, 2, 4, 10), NoGrad(padded([[1, 1, 2], [3, 1]], 3)))),
    "impossible_zero_infinity": (lambda T, x, t, r: F(T).ctc_loss(x, t, (3, 6, 2), (3, 2, 2), reduction=r,
                                                                  zero_infinity=True),
                                 lambda: (logp(6, 3, 4, 11), NoGrad(padded([[1, 1, 2], [3, 1], [2, 2]], 3)))),
    "larger": (lambda T, x, t, r: F(T).ctc_loss(x, t, (30, 24, 27, 30), (8, 5, 7, 1), reduction=r),
               lambda: (logp(30, 4, 10, 12), NoGrad(torch.randint(1, 10, (4, 8), generator=torch.Generator()
                                                                   .manual_seed(3))))),
    "torch_ctc_loss_enum": (lambda T, x, t, r: T.ctc_loss(x, t, (6, 5), (2, 2), 0, {"none": 0, "mean": 1, "sum": 2}[r],
                                                          False),
                            lambda: (logp(6, 2, 3, 13), NoGrad(padded([[1, 2], [2, 2]], 2)))),
}


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_ctc_loss(device, name, reduction):
    fn, make = CASES[name]
    run_case(device, lambda T, *a: fn(T, *a, reduction), make, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_ctc_loss_unbatched(device, reduction):
    for targets in (torch.tensor([1, 2, 2]), torch.tensor([[1, 2, 2]])):
        run_case(device, lambda T, x, t: F(T).ctc_loss(x, t, (6,), (3,), reduction=reduction),
                 lambda: (logp(6, 1, 4, 14)[:, 0], NoGrad(targets)))
    run_case(device, lambda T, x, t, il, tl: F(T).ctc_loss(x, t, il, tl, reduction=reduction),
             lambda: (logp(5, 1, 3, 15)[:, 0], NoGrad(torch.tensor([1, 2])), NoGrad(torch.tensor(5)),
                      NoGrad(torch.tensor(2))))


def test_ctc_loss_values_and_node(device):
    x = logp(5, 2, 4, 16)
    t = padded([[1, 2], [3]], 2)
    res = F(torchweb).ctc_loss(ours(x, device, requires_grad=True), ours(t, device), (5, 3), (2, 1), reduction="none")
    assert res.grad_fn.name() == "CtcLossBackward0"
    assert_close(res, F(torch).ctc_loss(x, t, (5, 3), (2, 1), reduction="none"), rtol=1e-5, atol=1e-6)
    # impossible: inf, and zero_infinity's 0
    imp = F(torchweb).ctc_loss(ours(x, device), ours(padded([[1, 1, 1], [2]], 3), device), (4, 1), (3, 1),
                               reduction="none")
    assert imp.tolist()[0] == math.inf and math.isfinite(imp.tolist()[1])
    zi = F(torchweb).ctc_loss(ours(x, device), ours(padded([[1, 1, 1], [2]], 3), device), (4, 1), (3, 1),
                              reduction="none", zero_infinity=True)
    assert zi.tolist()[0] == 0.0 and zi.tolist()[1] == imp.tolist()[1]


def test_ctc_loss_float_targets(device):
    x = logp(5, 2, 4, 17)
    t = torch.tensor([[1.0, 2.0], [3.0, 0.0]])
    check(lambda m, a, b: F(m).ctc_loss(a, b, (5, 4), (2, 1)), x, t, device=device, rtol=1e-5, atol=1e-6)


BAD = [
    # (log_probs, targets, input_lengths, target_lengths, kwargs)
    (lambda: (logp(5, 2, 4), padded([[1], [2]], 1), (5, 6), (1, 1), {})),                  # input length > T
    (lambda: (logp(5, 2, 4), padded([[1], [2]], 1), (5, -1), (1, 1), {})),                 # negative input length
    (lambda: (logp(5, 2, 4), padded([[1], [2]], 1), (5, 5), (1, 2), {})),                  # target too short
    (lambda: (logp(5, 2, 4), padded([[1], [2]], 1), (5, 5), (1, -1), {})),                 # negative target length
    (lambda: (logp(5, 2, 4), padded([[1], [2]], 1), (5, 5, 5), (1, 1), {})),               # lengths vs batch
    (lambda: (logp(5, 2, 4), padded([[1], [2]], 1), (5, 5), (1,), {})),
    (lambda: (logp(5, 2, 4), padded([[1]], 1), (5, 5), (1, 1), {})),                      # targets' batch
    (lambda: (logp(5, 2, 4), concat([[1], [2, 3]]), (5, 5), (1, 1), {})),                   # concatenated size
    (lambda: (logp(5, 2, 4), padded([[1], [2]], 1)[None], (5, 5), (1, 1), {})),            # 3-d targets
    (lambda: (logp(5, 2, 4), padded([[1], [2]], 1), (5, 5), (1, 1), {"blank": 4})),        # blank out of range
    (lambda: (logp(5, 2, 4), padded([[1], [2]], 1), (5, 5), (1, 1), {"blank": -1})),
    (lambda: (logp(5, 2, 4), padded([[1], [2]], 1), (5, 5), (1, 1), {"reduction": "avg"})),
    (lambda: (logp(5, 2, 4)[None], padded([[1], [2]], 1), (5, 5), (1, 1), {})),            # 4-d log_probs
    (lambda: (logp(5, 2, 4)[:, :0], padded([[1], [2]], 1)[:0], (), (), {})),                 # empty
    (lambda: (logp(5, 2, 4), padded([[1], [2]], 1), torch.tensor([5.0, 5.0]), torch.tensor([1, 1]), {})),
    (lambda: (logp(5, 2, 4), padded([[1], [2]], 1), torch.tensor([5, 5]), torch.tensor([True, True]), {})),
    (lambda: (logp(5, 2, 4), padded([[1], [2]], 1), torch.tensor([5, 5]), (1, 1), {})),    # mixed kinds
    (lambda: (logp(5, 2, 4).half(), padded([[1], [2]], 1), (5, 5), (1, 1), {})),          # float16
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_ctc_loss_bad_input(device, i):
    x, t, il, tl, kw = BAD[i]()
    with pytest.raises(Exception) as e:
        F(torch).ctc_loss(x, t, il, tl, **kw)

    def conv(v):
        return ours(v, device) if isinstance(v, torch.Tensor) else v
    with pytest.raises(e.type):
        F(torchweb).ctc_loss(conv(x), conv(t), conv(il), conv(tl), **kw)
    # the device is usable afterwards
    assert F(torchweb).ctc_loss(ours(logp(3, 1, 3), device), ours(torch.tensor([[1]]), device), (3,), (1,)).item() > 0
