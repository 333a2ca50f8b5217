"""Losses (ops/composite/loss.py) against PyTorch: every loss with reduction 'none', 'mean' and
'sum', forward on both devices and the gradients of every float input (run_case compares both),
the options (weight, ignore_index, label_smoothing, pos_weight, log_target, ...), empty inputs
and bad input (PyTorch's exception types)."""

import warnings

import pytest
import torch

import torchweb
import torchweb.nn.functional  # noqa: F401
from oracle import assert_close, check
from test_autograd_ops import NoGrad, run_case


def F(m):
    return m.nn.functional


def rn(*s):
    return torch.randn(s)


def prob(*s):
    return torch.rand(s) * 0.9 + 0.05


def cls(high, *s):
    return torch.randint(0, high, s)


def pm1(*s):
    return torch.randint(0, 2, s).float() * 2 - 1


def simplex(*s):
    return torch.softmax(torch.randn(s), 1)


REDUCTIONS = ("none", "mean", "sum")

# name: (fn(T, *inputs, reduction), input maker)
CASES = {
    "ce": (lambda T, x, t, r: F(T).cross_entropy(x, t, reduction=r), lambda: (rn(4, 5), NoGrad(cls(5, 4)))),
    "ce_weight": (lambda T, x, t, w, r: F(T).cross_entropy(x, t, w, reduction=r),
                  lambda: (rn(4, 5), NoGrad(cls(5, 4)), NoGrad(torch.rand(5) + 0.1))),
    "ce_ignore": (lambda T, x, t, r: F(T).cross_entropy(x, t, ignore_index=2, reduction=r),
                  lambda: (rn(6, 4), NoGrad(torch.tensor([2, 0, 1, 2, 3, 1])))),
    "ce_smooth": (lambda T, x, t, r: F(T).cross_entropy(x, t, reduction=r, label_smoothing=0.2),
                  lambda: (rn(4, 5), NoGrad(cls(5, 4)))),
    "ce_smooth_weight_ignore": (lambda T, x, t, w, r: F(T).cross_entropy(x, t, w, ignore_index=1, reduction=r,
                                                                          label_smoothing=0.3),
                                lambda: (rn(5, 4), NoGrad(torch.tensor([1, 0, 3, 1, 2])), NoGrad(torch.rand(4) + 0.1))),
    "ce_nd": (lambda T, x, t, r: F(T).cross_entropy(x, t, reduction=r), lambda: (rn(2, 3, 4, 2), NoGrad(cls(3, 2, 4, 2)))),
    "ce_nd_smooth_weight": (lambda T, x, t, w, r: F(T).cross_entropy(x, t, w, reduction=r, label_smoothing=0.1),
                            lambda: (rn(2, 3, 4), NoGrad(cls(3, 2, 4)), NoGrad(torch.rand(3) + 0.1))),
    "ce_unbatched": (lambda T, x, t, r: F(T).cross_entropy(x, t, reduction=r), lambda: (rn(5), NoGrad(torch.tensor(3)))),
    "ce_probs": (lambda T, x, t, r: F(T).cross_entropy(x, t, reduction=r), lambda: (rn(4, 5), simplex(4, 5))),
    "ce_probs_weight_smooth": (lambda T, x, t, w, r: F(T).cross_entropy(x, t, w, reduction=r, label_smoothing=0.25),
                               lambda: (rn(3, 4, 2), simplex(3, 4, 2), NoGrad(torch.rand(4) + 0.1))),
    "nll": (lambda T, x, t, r: F(T).nll_loss(x, t, reduction=r), lambda: (rn(4, 5), NoGrad(cls(5, 4)))),
    "nll_weight_ignore": (lambda T, x, t, w, r: F(T).nll_loss(x, t, w, ignore_index=0, reduction=r),
                          lambda: (rn(5, 3), NoGrad(torch.tensor([0, 1, 2, 0, 2])), NoGrad(torch.rand(3) + 0.1))),
    "nll_nd": (lambda T, x, t, r: F(T).nll_loss(x, t, reduction=r), lambda: (rn(2, 4, 3), NoGrad(cls(4, 2, 3)))),
    "mse": (lambda T, x, y, r: F(T).mse_loss(x, y, reduction=r), lambda: (rn(3, 4), rn(3, 4))),
    "l1": (lambda T, x, y, r: F(T).l1_loss(x, y, reduction=r), lambda: (rn(3, 4), rn(3, 4))),
    "smooth_l1": (lambda T, x, y, r: F(T).smooth_l1_loss(x, y, reduction=r), lambda: (rn(4, 5) * 2, rn(4, 5))),
    "smooth_l1_beta": (lambda T, x, y, r: F(T).smooth_l1_loss(x, y, reduction=r, beta=0.5), lambda: (rn(4, 5), rn(4, 5))),
    "smooth_l1_beta0": (lambda T, x, y, r: F(T).smooth_l1_loss(x, y, reduction=r, beta=0.0), lambda: (rn(4, 5), rn(4, 5))),
    "huber": (lambda T, x, y, r: F(T).huber_loss(x, y, reduction=r, delta=0.7), lambda: (rn(4, 5) * 2, rn(4, 5))),
    "bce": (lambda T, x, y, r: F(T).binary_cross_entropy(x, y, reduction=r), lambda: (prob(3, 4), prob(3, 4))),
    "bce_weight": (lambda T, x, y, w, r: F(T).binary_cross_entropy(x, y, w, reduction=r),
                   lambda: (prob(3, 4), NoGrad(prob(3, 4)), NoGrad(torch.rand(4)))),
    "bce_edges": (lambda T, x, y, r: F(T).binary_cross_entropy(x, y, reduction=r),
                  lambda: (NoGrad(torch.tensor([0.0, 1.0, 0.0, 1.0, 0.5])), torch.tensor([0.0, 1.0, 1.0, 0.0, 0.5]))),
    "bce_logits": (lambda T, x, y, r: F(T).binary_cross_entropy_with_logits(x, y, reduction=r),
                   lambda: (rn(3, 4) * 5, prob(3, 4))),
    "bce_logits_weights": (lambda T, x, y, w, pw, r: F(T).binary_cross_entropy_with_logits(x, y, w, reduction=r,
                                                                                         pos_weight=pw),
                           lambda: (rn(3, 4) * 5, prob(3, 4), NoGrad(torch.rand(4)), NoGrad(torch.rand(4) + 0.5))),
    "bce_logits_aten": (lambda T, x, y, pw, r: T.binary_cross_entropy_with_logits(
        x, y, None, pw, {"none": 0, "mean": 1, "sum": 2}[r]), lambda: (rn(2, 3) * 30, prob(2, 3), NoGrad(torch.rand(3)))),
    "kl_div": (lambda T, x, y, r: F(T).kl_div(x, y, reduction=r), lambda: (torch.log(simplex(3, 4)), torch.cat(
        [simplex(2, 4), torch.tensor([[0.0, 0.5, 0.5, 0.0]])]))),
    "kl_div_log_target": (lambda T, x, y, r: F(T).kl_div(x, y, reduction=r, log_target=True),
                          lambda: (torch.log(simplex(3, 4)), torch.log(simplex(3, 4)))),
    "kl_div_batchmean": (lambda T, x, y, r: F(T).kl_div(x, y, reduction="batchmean"),
                         lambda: (torch.log(simplex(3, 4)), simplex(3, 4))),
    "kl_div_aten": (lambda T, x, y, r: T.kl_div(x, y, {"none": 0, "mean": 1, "sum": 2}[r]),
                    lambda: (torch.log(simplex(3, 4)), simplex(3, 4))),
    "cosine_similarity": (lambda T, x, y, r: F(T).cosine_similarity(x, y), lambda: (rn(3, 5), rn(3, 5))),
    "cosine_similarity_bcast_dim": (lambda T, x, y, r: T.cosine_similarity(x, y, dim=-1, eps=1e-3),
                                    lambda: (rn(2, 3, 4), rn(3, 4))),
    "cosine_similarity_zero": (lambda T, x, y, r: F(T).cosine_similarity(x, y, dim=0),
                               lambda: (torch.cat([torch.zeros(3, 1), rn(3, 2)], 1), rn(3, 3))),
    "pairwise_distance": (lambda T, x, y, r: F(T).pairwise_distance(x, y), lambda: (rn(3, 5), rn(3, 5))),
    "pairwise_distance_p1_keepdim": (lambda T, x, y, r: T.pairwise_distance(x, y, 1.0, 1e-3, True),
                                     lambda: (rn(3, 5), rn(5))),
    "pairwise_distance_1d": (lambda T, x, y, r: F(T).pairwise_distance(x, y, 3.0), lambda: (rn(4), rn(4))),
    "cosine_embedding": (lambda T, x, y, t, r: F(T).cosine_embedding_loss(x, y, t, margin=0.2, reduction=r),
                         lambda: (rn(4, 5), rn(4, 5), NoGrad(pm1(4)))),
    "cosine_embedding_1d": (lambda T, x, y, t, r: F(T).cosine_embedding_loss(x, y, t, reduction=r),
                            lambda: (rn(5), rn(5), NoGrad(torch.tensor(-1.0)))),
    "margin_ranking": (lambda T, x, y, t, r: F(T).margin_ranking_loss(x, y, t, margin=0.3, reduction=r),
                       lambda: (rn(6), rn(6), NoGrad(pm1(6)))),
    "margin_ranking_aten": (lambda T, x, y, t, r: T.margin_ranking_loss(x, y, t, 0.1, {"none": 0, "mean": 1, "sum": 2}[r]),
                            lambda: (rn(6), rn(6), NoGrad(pm1(6)))),
    "triplet": (lambda T, a, p, n, r: F(T).triplet_margin_loss(a, p, n, reduction=r), lambda: (rn(4, 5), rn(4, 5), rn(4, 5))),
    "triplet_swap_p1": (lambda T, a, p, n, r: F(T).triplet_margin_loss(a, p, n, margin=2.0, p=1, swap=True, reduction=r),
                        lambda: (rn(4, 5), rn(4, 5), rn(4, 5))),
    "hinge_embedding": (lambda T, x, t, r: F(T).hinge_embedding_loss(x, t, margin=0.5, reduction=r),
                        lambda: (rn(3, 4), NoGrad(pm1(3, 4)))),
    "poisson": (lambda T, x, t, r: F(T).poisson_nll_loss(x, t, reduction=r), lambda: (rn(3, 4), torch.rand(3, 4) * 3)),
    "poisson_full_nolog": (lambda T, x, t, r: F(T).poisson_nll_loss(x, t, log_input=False, full=True, reduction=r),
                           lambda: (torch.rand(3, 4) + 0.1, NoGrad(torch.rand(3, 4) * 3))),
    "gaussian_nll": (lambda T, x, t, v, r: F(T).gaussian_nll_loss(x, t, v, reduction=r),
                     lambda: (rn(3, 4), rn(3, 4), torch.rand(3, 4) + 0.1)),
    "gaussian_nll_full_bcast_clamped": (lambda T, x, t, v, r: F(T).gaussian_nll_loss(x, t, v, full=True, eps=0.2,
                                                                                      reduction=r),
                                        lambda: (rn(3, 4), rn(3, 4), torch.tensor([0.05, 1.0, 0.5]))),
    "gaussian_nll_var1": (lambda T, x, t, v, r: F(T).gaussian_nll_loss(x, t, v, reduction=r),
                          lambda: (rn(3, 4), rn(3, 4), torch.rand(3, 1) + 0.1)),
    "soft_margin": (lambda T, x, t, r: F(T).soft_margin_loss(x, t, reduction=r), lambda: (rn(3, 4), NoGrad(pm1(3, 4)))),
    "multilabel_soft_margin": (lambda T, x, t, r: F(T).multilabel_soft_margin_loss(x, t, reduction=r),
                               lambda: (rn(3, 4), NoGrad(torch.randint(0, 2, (3, 4)).float()))),
    "multilabel_soft_margin_weight": (lambda T, x, t, w, r: F(T).multilabel_soft_margin_loss(x, t, w, reduction=r),
                                      lambda: (rn(3, 4), prob(3, 4), torch.rand(4))),
    "multi_margin": (lambda T, x, t, r: F(T).multi_margin_loss(x, t, reduction=r), lambda: (rn(4, 5), NoGrad(cls(5, 4)))),
    "multi_margin_p2_weight": (lambda T, x, t, w, r: F(T).multi_margin_loss(x, t, p=2, margin=0.5, weight=w, reduction=r),
                               lambda: (rn(4, 5), NoGrad(cls(5, 4)), NoGrad(torch.rand(5)))),
    "multi_margin_1d": (lambda T, x, t, r: F(T).multi_margin_loss(x, t, reduction=r), lambda: (rn(5), NoGrad(torch.tensor(2)))),
    "multilabel_margin": (lambda T, x, t, r: F(T).multilabel_margin_loss(x, t, reduction=r),
                          lambda: (rn(3, 4), NoGrad(torch.tensor([[3, 0, -1, 1], [0, 1, 2, 3], [-1, 1, 2, 0]])))),
    "multilabel_margin_1d": (lambda T, x, t, r: F(T).multilabel_margin_loss(x, t, reduction=r),
                             lambda: (rn(4), NoGrad(torch.tensor([2, 1, -1, 0])))),
}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_loss_forward_backward(device, name, reduction):
    fn, inputs = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_case(device, lambda T, *a: fn(T, *a, reduction), inputs, rtol=1e-4, atol=1e-5)


def test_ce_matches_on_larger_batch(device):
    # 70000 rows of 3 classes: the one-hot mask and the elementwise steps cross 65535 workgroups
    x, t = torch.randn(70000, 3), torch.randint(0, 3, (70000,))
    check(lambda m, a, b: F(m).cross_entropy(a, b), x, t, device=device, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss"])
def test_pointwise_losses_empty(device, name):
    x = torch.zeros(0, 3)
    for r in REDUCTIONS:
        check(lambda m, a, b: getattr(F(m), name)(a, b, reduction=r), x, x, device=device)


def test_legacy_size_average_reduce(device):
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for sa, rd in [(False, None), (None, False), (True, True)]:
            check(lambda m, a, b: F(m).mse_loss(a, b, size_average=sa, reduce=rd), x, y, device=device)


BAD = [
    lambda m: F(m).cross_entropy(m.ones(3, 5), m.tensor([1, 2, 5])),
    lambda m: F(m).cross_entropy(m.ones(3, 5), m.tensor([1, 2, -1])),
    lambda m: F(m).cross_entropy(m.ones(3, 5), m.tensor([1, 2])),
    lambda m: F(m).cross_entropy(m.ones(3, 5), m.tensor([1, 2, 3]), weight=m.ones(4)),
    lambda m: F(m).cross_entropy(m.ones(3, 5), m.ones(3, 4)),
    lambda m: F(m).cross_entropy(m.ones(3, 5), m.tensor([1, 2, 3], dtype=m.int32)),
    lambda m: F(m).cross_entropy(m.ones(3, 5), m.tensor([1, 2, 3]), label_smoothing=1.5),
    lambda m: F(m).nll_loss(m.ones(3, 5), m.tensor([1, 2, 3]), reduction="foo"),
    lambda m: F(m).nll_loss(m.ones(3, 5, 2), m.tensor([1, 2, 3])),
    lambda m: F(m).mse_loss(m.ones(3), m.ones(3), reduction="avg"),
    lambda m: F(m).mse_loss(m.ones(3), m.ones(2)),
    lambda m: F(m).binary_cross_entropy(m.ones(3) * 0.5, m.ones(2)),
    lambda m: F(m).binary_cross_entropy(m.tensor([1.5]), m.ones(1)),
    lambda m: F(m).binary_cross_entropy_with_logits(m.ones(3), m.ones(2)),
    lambda m: F(m).kl_div(m.ones(3), m.ones(3), reduction="foo"),
    lambda m: F(m).multi_margin_loss(m.ones(3, 5), m.tensor([1, 2, 3]), p=3),
    lambda m: F(m).multi_margin_loss(m.ones(3, 5), m.tensor([1, 2, 7])),
    lambda m: F(m).gaussian_nll_loss(m.ones(3, 5), m.ones(3, 5), m.ones(3, 5) * -1),
    lambda m: F(m).gaussian_nll_loss(m.ones(3, 5), m.ones(3, 5), m.ones(2)),
    lambda m: F(m).gaussian_nll_loss(m.ones(3, 5), m.ones(3, 5), m.ones(3, 5), reduction="x"),
    lambda m: F(m).triplet_margin_loss(m.ones(3, 5), m.ones(3, 5), m.ones(3, 5), margin=0.0),
    lambda m: F(m).triplet_margin_loss(m.ones(3, 5), m.ones(5), m.ones(3, 5)),
    lambda m: F(m).cosine_embedding_loss(m.ones(3, 5), m.ones(3, 4), m.ones(3)),
    lambda m: F(m).multilabel_margin_loss(m.ones(3, 5), m.ones(3, 4, dtype=m.int64)),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_loss_bad_input(device, i):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            BAD[i](torch)
        except Exception as e:
            theirs = e
        else:
            theirs = None
        old = torchweb.get_default_device()
        torchweb.set_default_device(device)
        try:
            if theirs is None:
                BAD[i](torchweb)
                return
            with pytest.raises(type(theirs)) as mine:
                BAD[i](torchweb)
                # class indices are checked on the GPU (as CUDA's device-side assert): raised
                # at the next readback or synchronize, with PyTorch's words first
                torchweb.webgpu.synchronize()
        finally:
            torchweb.set_default_device(old)
    if isinstance(theirs, (ValueError, IndexError)):
        assert str(mine.value) == str(theirs) or (
            device == "webgpu" and str(mine.value).startswith(str(theirs) + " (in cross_entropy/nll_loss on webgpu"))


@pytest.mark.parametrize("name", ["multilabel_soft_margin_loss", "binary_cross_entropy_with_logits",
                                  "soft_margin_loss"])
def test_log_sigmoid_losses_gradient_at_zero(device, name):
    # log(sigmoid(x)) has gradient 1 - sigmoid(x) = 0.5 at x = 0 exactly (the browser tier
    # caught a composite whose kinks gave 1 there)
    x = torch.tensor([[0.0, 1.0, -2.0, 0.0]], requires_grad=True)
    t = torch.tensor([[1.0, 0.0, 1.0, 0.0]]) if name != "soft_margin_loss" else torch.tensor([[1.0, -1.0, 1.0, -1.0]])
    getattr(torch.nn.functional, name)(x, t).backward()
    mine = torchweb.tensor(x.detach().tolist(), device=device, requires_grad=True)
    getattr(torchweb.nn.functional, name)(mine, torchweb.tensor(t.tolist(), device=device)).backward()
    assert torch.allclose(torch.tensor(mine.grad.tolist()), x.grad, atol=1e-6)


def test_nll_picks_the_target_without_touching_other_classes(device):
    """-inf log-probabilities of other classes (a masked vocabulary) leave the loss finite, as
    PyTorch's gather does (a one-hot product would give 0 * -inf = NaN); ignored targets count
    nothing even where class 0 is -inf; with class weights; gradients too."""
    import torch.nn.functional as TF
    ninf = float("-inf")
    logits = torch.tensor([[0.5, ninf, 1.0, ninf], [ninf, 2.0, 0.1, 0.3], [ninf, 0.2, 0.4, ninf]])
    target = torch.tensor([2, 1, -100])
    weight = torch.tensor([1.0, 2.0, 0.5, 3.0])
    for reduction in ("mean", "sum", "none"):
        for w in (None, weight):
            def ce(M, x, t, *w_):
                F_ = TF if M is torch else torchweb.nn.functional
                return F_.cross_entropy(x, t, *w_, reduction=reduction)

            def nll(M, x, t, *w_):
                F_ = TF if M is torch else torchweb.nn.functional
                return F_.nll_loss(F_.log_softmax(x, 1), t, *w_, reduction=reduction)
            args = (logits, target) if w is None else (logits, target, w)
            check(ce, *args, device=device)
            check(nll, *args, device=device)
    x = torchweb.tensor(logits.tolist(), device=device, requires_grad=True)
    torchweb.nn.functional.cross_entropy(x, torchweb.tensor(target.tolist(), device=device)).backward()
    xt = logits.clone().requires_grad_()
    TF.cross_entropy(xt, target).backward()
    assert_close(x.grad, xt.grad, rtol=1e-5, atol=1e-6)
