"""The loss modules (nn/modules/loss.py) against PyTorch's: every class in
torch.nn.modules.loss.__all__, forward and backward on both devices for each reduction, class
weights and pos_weight as buffers (state_dict keys, .to()), the legacy size_average/reduce
arguments with PyTorch's warning, repr text, constructor and reduction errors."""

import warnings

import pytest
import torch

import torchweb
from nn_act_loss_helpers import check_ctor_error, pair
from oracle import assert_close, make, ours, theirs

# Names of torch.nn.modules.loss.__all__ left out, with the reason (none).
LEFT_OUT = {}

N, C = 3, 4


def _lib(nn):
    return torch if nn is torch.nn else torchweb


def _classes(shape, c=C):
    return torch.randint(0, c, shape, generator=torch.Generator().manual_seed(sum(shape) + 7))


def _pm1(shape):
    return torch.where(make(shape) > 0, 1.0, -1.0)


def _prob(shape):
    return torch.rand(shape, generator=torch.Generator().manual_seed(5)) * 0.9 + 0.05


def _ce_probs():
    return torch.softmax(make((N, C)), 1)


def _multilabel_target():
    return torch.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [-1, 2, 0, 1]])


def _ctc_inputs():
    lp = torch.log_softmax(make((6, 2, 5)), 2)
    return [lp, torch.tensor([[1, 2, 2], [3, 4, 0]]), torch.tensor([6, 5]), torch.tensor([3, 2])]


def _cos_distance(nn):
    F = nn.functional
    return lambda x, y: 1.0 - F.cosine_similarity(x, y)


# name -> variants: (build(nn, reduction), inputs(), which inputs get a gradient, tolerances)
# build's reduction argument is None for "the default".
def _r(kw, reduction):
    return dict(kw, reduction=reduction) if reduction is not None else kw


CASES = {
    "L1Loss": [(lambda nn, r: nn.L1Loss(**_r({}, r)), lambda: [make((N, C)), make((N, C))], (1, 1))],
    "MSELoss": [(lambda nn, r: nn.MSELoss(**_r({}, r)), lambda: [make((N, C)), make((N, C))], (1, 1))],
    "CrossEntropyLoss": [
        (lambda nn, r: nn.CrossEntropyLoss(**_r({}, r)), lambda: [make((N, C)), _classes((N,))], (1, 0)),
        (lambda nn, r: nn.CrossEntropyLoss(weight=_lib(nn).tensor([1.0, 2.0, 0.5, 3.0]), ignore_index=1,
                                           label_smoothing=0.1, **_r({}, r)),
         lambda: [make((N, C)), torch.tensor([1, 0, 3])], (1, 0)),
        (lambda nn, r: nn.CrossEntropyLoss(label_smoothing=0.2, **_r({}, r)), lambda: [make((N, C)), _ce_probs()],
         (1, 1)),
        (lambda nn, r: nn.CrossEntropyLoss(**_r({}, r)), lambda: [make((2, C, 3)), _classes((2, 3))], (1, 0)),
        (lambda nn, r: nn.CrossEntropyLoss(**_r({}, r)), lambda: [make((C,)), torch.tensor(2)], (1, 0)),
    ],
    "NLLLoss": [
        (lambda nn, r: nn.NLLLoss(**_r({}, r)), lambda: [torch.log_softmax(make((N, C)), 1), _classes((N,))], (1, 0)),
        (lambda nn, r: nn.NLLLoss(weight=_lib(nn).tensor([0.5, 1.0, 2.0, 1.5]), ignore_index=2, **_r({}, r)),
         lambda: [torch.log_softmax(make((N, C, 2)), 1), torch.tensor([[2, 1], [0, 3], [3, 2]])], (1, 0)),
    ],
    "NLLLoss2d": [(lambda nn, r: nn.NLLLoss2d(**_r({}, r)),
                   lambda: [torch.log_softmax(make((2, C, 2, 2)), 1), _classes((2, 2, 2))], (1, 0))],
    "PoissonNLLLoss": [
        (lambda nn, r: nn.PoissonNLLLoss(**_r({}, r)), lambda: [make((N, C)), _prob((N, C)) * 4], (1, 1)),
        (lambda nn, r: nn.PoissonNLLLoss(log_input=False, full=True, eps=1e-6, **_r({}, r)),
         lambda: [_prob((N, C)) * 3, torch.tensor([[0.0, 1, 2, 3], [4, 0.5, 1, 2], [1, 1, 5, 0]])], (1, 1)),
    ],
    "GaussianNLLLoss": [
        (lambda nn, r: nn.GaussianNLLLoss(**_r({}, r)), lambda: [make((N, C)), make((N, C)), _prob((N, C))], (1, 1, 1)),
        (lambda nn, r: nn.GaussianNLLLoss(full=True, eps=1e-3, **_r({}, r)),
         lambda: [make((N, C)), make((N, C)), _prob((N, 1))], (1, 1, 1)),
    ],
    "KLDivLoss": [
        (lambda nn, r: nn.KLDivLoss(**_r({}, r)), lambda: [torch.log_softmax(make((N, C)), 1), _ce_probs()], (1, 1)),
        (lambda nn, r: nn.KLDivLoss(log_target=True, **_r({}, r)),
         lambda: [torch.log_softmax(make((N, C)), 1), torch.log_softmax(make((N, C)), 1)], (1, 1)),
    ],
    "BCELoss": [
        (lambda nn, r: nn.BCELoss(**_r({}, r)), lambda: [_prob((N, C)), _prob((N, C)).flip(0)], (1, 0)),
        (lambda nn, r: nn.BCELoss(weight=_lib(nn).tensor([1.0, 0.5, 2.0, 1.0]), **_r({}, r)),
         lambda: [_prob((N, C)), torch.tensor([[0.0, 1, 1, 0], [1, 1, 0, 0], [0.5, 0, 1, 1]])], (1, 0)),
    ],
    "BCEWithLogitsLoss": [
        (lambda nn, r: nn.BCEWithLogitsLoss(**_r({}, r)), lambda: [make((N, C)), _prob((N, C))], (1, 0)),
        (lambda nn, r: nn.BCEWithLogitsLoss(weight=_lib(nn).tensor([1.0, 0.5, 2.0, 1.0]),
                                            pos_weight=_lib(nn).tensor([2.0, 1.0, 0.5, 3.0]), **_r({}, r)),
         lambda: [make((N, C)), _prob((N, C))], (1, 0)),
    ],
    "HingeEmbeddingLoss": [
        (lambda nn, r: nn.HingeEmbeddingLoss(**_r({}, r)), lambda: [make((N, C)), _pm1((N, C))], (1, 0)),
        (lambda nn, r: nn.HingeEmbeddingLoss(margin=2.0, **_r({}, r)), lambda: [make((N, C)), _pm1((N, C))], (1, 0)),
    ],
    "MultiLabelMarginLoss": [
        (lambda nn, r: nn.MultiLabelMarginLoss(**_r({}, r)), lambda: [make((N, C)), _multilabel_target()], (1, 0)),
        (lambda nn, r: nn.MultiLabelMarginLoss(**_r({}, r)), lambda: [make((C,)), torch.tensor([2, 1, -1, 0])],
         (1, 0)),
    ],
    "SmoothL1Loss": [
        (lambda nn, r: nn.SmoothL1Loss(**_r({}, r)), lambda: [make((N, C)), make((N, C))], (1, 1)),
        (lambda nn, r: nn.SmoothL1Loss(beta=0.5, **_r({}, r)), lambda: [make((N, C)), make((N, C))], (1, 1)),
    ],
    "HuberLoss": [
        (lambda nn, r: nn.HuberLoss(**_r({}, r)), lambda: [make((N, C)), make((N, C))], (1, 1)),
        (lambda nn, r: nn.HuberLoss(delta=0.7, **_r({}, r)), lambda: [make((N, C)), make((N, C))], (1, 1)),
    ],
    "SoftMarginLoss": [(lambda nn, r: nn.SoftMarginLoss(**_r({}, r)), lambda: [make((N, C)), _pm1((N, C))], (1, 0))],
    "CrossEntropyLoss_": [],
    "LinearCrossEntropyLoss": [
        (lambda nn, r: nn.LinearCrossEntropyLoss(5, C, **_r({}, r)), lambda: [make((N, 5)), _classes((N,))], (1, 0)),
        (lambda nn, r: nn.LinearCrossEntropyLoss(5, C, out_features=(2,), bias=True, label_smoothing=0.1,
                                                 weight=_lib(nn).tensor([1.0, 2.0, 0.5, 1.0]), ignore_index=3,
                                                 **_r({}, r)),
         lambda: [make((N, 5)), torch.tensor([[0, 3], [1, 2], [3, 3]])], (1, 0)),
        (lambda nn, r: nn.LinearCrossEntropyLoss(5, C, **_r({}, r)), lambda: [make((N, 5)), _ce_probs()], (1, 1)),
    ],
    "MultiLabelSoftMarginLoss": [
        (lambda nn, r: nn.MultiLabelSoftMarginLoss(**_r({}, r)),
         lambda: [make((N, C)), (make((N, C)) > 0).float()], (1, 0)),
        (lambda nn, r: nn.MultiLabelSoftMarginLoss(weight=_lib(nn).tensor([1.0, 2.0, 0.5, 1.5]), **_r({}, r)),
         lambda: [make((N, C)), (make((N, C)) > 0).float()], (1, 0)),
    ],
    "CosineEmbeddingLoss": [
        (lambda nn, r: nn.CosineEmbeddingLoss(**_r({}, r)), lambda: [make((N, 5)), make((N, 5)), _pm1((N,))],
         (1, 1, 0)),
        (lambda nn, r: nn.CosineEmbeddingLoss(margin=-0.3, **_r({}, r)),
         lambda: [make((N, 5)), make((N, 5)), _pm1((N,))], (1, 1, 0)),
    ],
    "MarginRankingLoss": [
        (lambda nn, r: nn.MarginRankingLoss(**_r({}, r)), lambda: [make((5,)), make((5,)), _pm1((5,))], (1, 1, 0)),
        (lambda nn, r: nn.MarginRankingLoss(margin=0.5, **_r({}, r)), lambda: [make((5,)), make((5,)), _pm1((5,))],
         (1, 1, 0)),
    ],
    "MultiMarginLoss": [
        (lambda nn, r: nn.MultiMarginLoss(**_r({}, r)), lambda: [make((N, C)), _classes((N,))], (1, 0)),
        (lambda nn, r: nn.MultiMarginLoss(p=2, margin=0.5, weight=_lib(nn).tensor([1.0, 2.0, 0.5, 1.5]),
                                          **_r({}, r)),
         lambda: [make((N, C)), _classes((N,))], (1, 0)),
    ],
    "TripletMarginLoss": [
        (lambda nn, r: nn.TripletMarginLoss(**_r({}, r)), lambda: [make((N, 5)), make((N, 5)), make((N, 5))],
         (1, 1, 1)),
        (lambda nn, r: nn.TripletMarginLoss(margin=2.0, p=1.0, swap=True, **_r({}, r)),
         lambda: [make((N, 5)), make((N, 5)), make((N, 5))], (1, 1, 1)),
    ],
    "TripletMarginWithDistanceLoss": [
        (lambda nn, r: nn.TripletMarginWithDistanceLoss(**_r({}, r)),
         lambda: [make((N, 5)), make((N, 5)), make((N, 5))], (1, 1, 1)),
        (lambda nn, r: nn.TripletMarginWithDistanceLoss(distance_function=_cos_distance(nn), margin=0.5, swap=True,
                                                        **_r({}, r)),
         lambda: [make((N, 5)), make((N, 5)), make((N, 5))], (1, 1, 1)),
    ],
    "CTCLoss": [
        (lambda nn, r: nn.CTCLoss(**_r({}, r)), _ctc_inputs, (1, 0, 0, 0)),
        (lambda nn, r: nn.CTCLoss(blank=4, zero_infinity=True, **_r({}, r)),
         lambda: [torch.log_softmax(make((4, 2, 5)), 2), torch.tensor([[1, 1, 2], [3, 0, 0]]),
                  torch.tensor([4, 4]), torch.tensor([3, 2])], (1, 0, 0, 0)),
    ],
}
del CASES["CrossEntropyLoss_"]

NAMES = [n for n in torch.nn.modules.loss.__all__ if n not in LEFT_OUT]
REDUCTIONS = [None, "none", "mean", "sum"]
VARIANTS = [(n, i, r) for n in NAMES for i in range(max(1, len(CASES.get(n, [])))) for r in REDUCTIONS]
VARIANTS += [("KLDivLoss", 0, "batchmean"), ("KLDivLoss", 1, "batchmean")]


def _quiet():
    w = warnings.catch_warnings()
    w.__enter__()
    warnings.simplefilter("ignore")
    return w


def test_every_loss_module_exists():
    missing = [n for n in torch.nn.modules.loss.__all__ if not hasattr(torchweb.nn, n) and n not in LEFT_OUT]
    assert not missing, f"torch.nn loss modules missing in torchweb.nn: {missing}"
    for n in NAMES:
        assert getattr(torchweb.nn, n).__module__ == "torchweb.nn"


@pytest.mark.parametrize("name,i,reduction", VARIANTS, ids=[f"{n}-{i}-{r}" for n, i, r in VARIANTS])
def test_forward_backward(name, i, reduction, device):
    assert name in CASES, f"no test case for nn.{name}"
    build, inputs, grads = CASES[name][i]
    w = _quiet()
    try:
        mine, ref = pair(lambda nn: build(nn, reduction), device)    # repr and state_dict keys equal
    finally:
        w.__exit__(None, None, None)
    assert [k for k, _ in mine.named_buffers()] == [k for k, _ in ref.named_buffers()]
    assert [k for k, _ in mine.named_parameters()] == [k for k, _ in ref.named_parameters()]
    for b in mine.buffers():
        assert b.device.type == device
    assert mine.reduction == ref.reduction
    xs = inputs()
    t_in = [x.clone().requires_grad_(bool(g)) for x, g in zip(xs, grads)]
    w_in = [ours(x, device, requires_grad=bool(g)) for x, g in zip(xs, grads)]
    expected = ref(*t_in)
    got = mine(*w_in)
    assert_close(got, expected, rtol=1e-4, atol=1e-5)
    up = make(tuple(expected.shape))
    expected.backward(up)
    got.backward(ours(up, device))
    for a, b, g in zip(w_in, t_in, grads):
        if g:
            assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5)
    for (k, a), (_, b) in zip(mine.named_parameters(), ref.named_parameters()):
        assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_invalid_reduction(name, device):
    """An unknown reduction string: ValueError at the call, as PyTorch."""
    build, inputs, _ = CASES[name][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine, ref = build(torchweb.nn, "bogus").to(device), build(torch.nn, "bogus")
    xs = inputs()
    with pytest.raises(ValueError) as e:
        ref(*xs)
    with pytest.raises(ValueError) as e2:
        mine(*[ours(x, device) for x in xs])
    assert str(e2.value) == str(e.value)


LEGACY = [(None, False), (False, None), (False, False), (True, True), (True, False), (False, True), (True, None)]


@pytest.mark.parametrize("size_average,reduce", LEGACY)
@pytest.mark.parametrize("name", ["L1Loss", "MSELoss", "NLLLoss", "CrossEntropyLoss", "BCELoss", "KLDivLoss",
                                  "SmoothL1Loss", "HingeEmbeddingLoss", "SoftMarginLoss", "MultiMarginLoss",
                                  "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "PoissonNLLLoss",
                                  "CosineEmbeddingLoss", "MarginRankingLoss", "TripletMarginLoss",
                                  "BCEWithLogitsLoss"])
def test_legacy_size_average_reduce(name, size_average, reduce):
    with warnings.catch_warnings(record=True) as rec_t:
        warnings.simplefilter("always")
        ref = getattr(torch.nn, name)(size_average=size_average, reduce=reduce)
    with warnings.catch_warnings(record=True) as rec_w:
        warnings.simplefilter("always")
        mine = getattr(torchweb.nn, name)(size_average=size_average, reduce=reduce, reduction="sum")
    assert mine.reduction == ref.reduction
    assert [str(r.message) for r in rec_w] == [str(r.message) for r in rec_t]
    assert [r.category for r in rec_w] == [r.category for r in rec_t]


def test_legacy_reduction_forward(device):
    x, y = make((N, C)), make((N, C))
    for sa, rd in LEGACY:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mine, ref = torchweb.nn.MSELoss(sa, rd), torch.nn.MSELoss(sa, rd)
        assert_close(mine(ours(x, device), ours(y, device)), ref(x, y), rtol=1e-5, atol=1e-6)


def test_reduction_module():
    from torchweb.nn import _reduction as R
    assert [R.get_enum(s) for s in ("none", "mean", "sum")] == [0, 1, 2]
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        R.get_enum("bad")
    with pytest.warns(UserWarning, match="elementwise_mean"):
        assert R.get_enum("elementwise_mean") == 1
    assert R.legacy_get_enum(False, True, emit_warning=False) == 2


def test_nllloss2d_deprecated():
    with pytest.warns(FutureWarning, match="NLLLoss2d"):
        m = torchweb.nn.NLLLoss2d()
    assert isinstance(m, torchweb.nn.NLLLoss)


def test_weight_buffers_follow_module(device):
    w = torchweb.tensor([1.0, 2.0, 3.0])
    m = torchweb.nn.CrossEntropyLoss(weight=w)
    assert list(m.state_dict()) == ["weight"] and dict(m.named_buffers())["weight"] is w
    assert list(m.named_parameters()) == []
    m = torchweb.nn.BCEWithLogitsLoss(pos_weight=torchweb.tensor([2.0]))
    assert list(m.state_dict()) == ["pos_weight"]
    assert list(torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0])).state_dict()) == ["pos_weight"]
    m = torchweb.nn.BCEWithLogitsLoss(weight=torchweb.ones(3), pos_weight=torchweb.ones(3)).to(device)
    assert [b.device.type for b in m.buffers()] == [device, device]
    assert list(torchweb.nn.CrossEntropyLoss().state_dict()) == []
    # a state_dict from PyTorch loads
    m = torchweb.nn.NLLLoss(weight=torchweb.zeros(3))
    m.load_state_dict({"weight": ours(torch.tensor([1.0, 2.0, 3.0]), "cpu")})
    assert m.weight.tolist() == [1.0, 2.0, 3.0]
    lce = torchweb.nn.LinearCrossEntropyLoss(4, 3, bias=True)
    assert list(lce.state_dict()) == list(torch.nn.LinearCrossEntropyLoss(4, 3, bias=True).state_dict())


def test_constructor_errors():
    check_ctor_error(lambda nn: nn.MultiMarginLoss(p=3))
    check_ctor_error(lambda nn: nn.MultiMarginLoss(weight=_lib(nn).ones(2, 2)))
    check_ctor_error(lambda nn: nn.TripletMarginLoss(margin=0.0))
    check_ctor_error(lambda nn: nn.TripletMarginWithDistanceLoss(margin=-1.0))
    check_ctor_error(lambda nn: nn.HuberLoss(delta="1"))
    check_ctor_error(lambda nn: nn.LinearCrossEntropyLoss(4, 3, label_smoothing=1.5))
    check_ctor_error(lambda nn: nn.LinearCrossEntropyLoss(4, 3, weight=_lib(nn).ones(2)))
    for build in (lambda nn: nn.GaussianNLLLoss(True), lambda nn: nn.TripletMarginWithDistanceLoss(None),
                  lambda nn: nn.LinearCrossEntropyLoss(4, 3, ())):
        check_ctor_error(build)          # keyword-only arguments


def test_reprs():
    for name in NAMES:
        for build, _, _ in CASES[name]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for r in REDUCTIONS:
                    assert repr(build(torchweb.nn, r)) == repr(build(torch.nn, r)), name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in NAMES:
            if name != "LinearCrossEntropyLoss":
                assert repr(getattr(torchweb.nn, name)()) == repr(getattr(torch.nn, name)()), name


def test_attributes():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in NAMES:
            for build, _, _ in CASES[name]:
                a, b = build(torchweb.nn, None), build(torch.nn, None)
                assert getattr(type(a), "__constants__", []) == getattr(type(b), "__constants__", []), name
                for k in list(getattr(type(b), "__constants__", [])) + ["reduction"]:
                    av, bv = getattr(a, k), getattr(b, k)
                    assert av == bv, (name, k, av, bv)


def test_forward_errors(device):
    def both(build, xs, exc):
        with pytest.raises(exc):
            build(torch.nn)(*xs)
        with pytest.raises(exc):
            build(torchweb.nn).to(device)(*[ours(x, device) for x in xs])
            torchweb.webgpu.synchronize()   # class indices are checked on the GPU: raised here
    both(lambda nn: nn.CrossEntropyLoss(), [make((N, C)), torch.tensor([0, 1, 4])], IndexError)
    both(lambda nn: nn.NLLLoss(), [make((N, C)), torch.tensor([0, 1])], ValueError)
    both(lambda nn: nn.CrossEntropyLoss(label_smoothing=0.1), [make((N, C)), make((N, C + 1))], RuntimeError)
    both(lambda nn: nn.TripletMarginLoss(), [make((N, 5)), make((N, 5)), make((5,))], RuntimeError)
    both(lambda nn: nn.TripletMarginWithDistanceLoss(), [make((N, 5)), make((N, 5)), make((5,))], RuntimeError)
    both(lambda nn: nn.LinearCrossEntropyLoss(5, C), [make((N, 4)), _classes((N,))], RuntimeError)
    both(lambda nn: nn.LinearCrossEntropyLoss(5, C), [make((2, N, 5)), _classes((2, N))], RuntimeError)
    both(lambda nn: nn.LinearCrossEntropyLoss(5, C, ignore_index=1), [make((N, 5)), _ce_probs()], RuntimeError)
    both(lambda nn: nn.MultiMarginLoss(), [make((N, C)), torch.tensor([0, 1, 9])], RuntimeError)


def test_functional_triplet_with_distance(device):
    a, p, n = make((N, 5)), make((N, 5)), make((N, 5))
    F, TF = torchweb.nn.functional, torch.nn.functional
    for kw in ({}, {"margin": 0.3, "swap": True, "reduction": "none"}, {"reduction": "sum"}):
        assert_close(F.triplet_margin_with_distance_loss(ours(a, device), ours(p, device), ours(n, device), **kw),
                     TF.triplet_margin_with_distance_loss(a, p, n, **kw), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_with_distance_loss(ours(a, device), ours(p, device), ours(n, device), margin=0)
    with pytest.raises(ValueError, match="not a valid value"):
        F.triplet_margin_with_distance_loss(ours(a, device), ours(p, device), ours(n, device), reduction="x")
    with pytest.raises(TypeError):
        F.triplet_margin_with_distance_loss(ours(a, device), ours(p, device), ours(n, device), None)


@pytest.mark.parametrize("name", ["L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "SoftMarginLoss", "BCEWithLogitsLoss",
                                  "PoissonNLLLoss", "HingeEmbeddingLoss"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_empty_and_zero_dim(name, reduction, device):
    m, ref = getattr(torchweb.nn, name)(reduction=reduction), getattr(torch.nn, name)(reduction=reduction)
    for x, y in ((torch.zeros(0, 3), torch.zeros(0, 3)), (make(()), _prob(()))):
        tx = x.clone().requires_grad_(True)
        wx = ours(x, device, requires_grad=True)
        expected, got = ref(tx, y), m(wx, ours(y, device))
        assert_close(got, expected, rtol=1e-4, atol=1e-5)
        if x.numel():
            expected.sum().backward()
            got.sum().backward()
            assert_close(wx.grad, tx.grad, rtol=1e-4, atol=1e-5)


def test_noncontiguous_inputs(device):
    base = make((C, N))
    target = _classes((N,))
    for build in (lambda nn: nn.CrossEntropyLoss(label_smoothing=0.1), lambda nn: nn.MultiMarginLoss(),
                  lambda nn: nn.MSELoss(reduction="none")):
        mine, ref = pair(build, device)
        tb = base.clone().requires_grad_(True)
        wb = ours(base, device, requires_grad=True)
        wx = wb.t()
        assert not wx.is_contiguous()
        t_target = target if not isinstance(ref, torch.nn.MSELoss) else make((N, C))
        expected, got = ref(tb.t(), t_target), mine(wx, ours(t_target, device))
        assert_close(got, expected, rtol=1e-4, atol=1e-5)
        expected.sum().backward()
        got.sum().backward()
        assert_close(wb.grad, tb.grad, rtol=1e-4, atol=1e-5)


def test_triplet_with_distance_default_submodule():
    m = torchweb.nn.TripletMarginWithDistanceLoss()
    assert type(m.distance_function) is torchweb.nn.PairwiseDistance
    assert [n for n, _ in m.named_children()] == ["distance_function"]
    assert list(m.state_dict()) == []
    f = lambda x, y: (x - y).abs().sum(-1)   # noqa: E731
    assert torchweb.nn.TripletMarginWithDistanceLoss(distance_function=f).distance_function is f
