"""The torch.* in-place functions (torch.abs_, torch.relu_, torch.clamp_, torch.fill_, ...):
every name PyTorch has that the registry's TORCH_INPLACE or torchweb/_inplace_functions.py
provides, each writing its input as PyTorch's does."""

import pytest
import torch

import torchweb
from oracle import assert_close, make, ours
from torchweb.ops.registry import OPS, TORCH_INPLACE

# argument lists for the ones that need more than the input
ARGS = {
    "clamp_": (-0.5, 0.5), "clip_": (-0.5, 0.5), "clamp_max_": (0.3,), "clamp_min_": (-0.3,),
    "xlogy_": ("other",), "logit_": (1e-3,), "gcd_": ("other",), "lcm_": ("other",), "ldexp_": ("other",),
    "celu_": (0.7,), "threshold_": (0.1, 20.0), "fill_": (2.5,), "addmv_": ("mat", "vec"),
    "dropout_": (0.0, True), "alpha_dropout_": (0.3, False), "feature_alpha_dropout_": (0.3, False),
    "feature_dropout_": (0.5, False),
    "rrelu_": (0.1, 0.3, False),
}
INTEGER = {"gcd_", "lcm_"}
SKIP = {"index_put_", "embedding_renorm_"}   # tested below with their own arguments
POSITIVE = {"acosh_", "arccosh_"}            # domain >= 1
UNIT = {"acos_", "arccos_", "asin_", "arcsin_", "atanh_", "arctanh_", "logit_"}


def _names():
    import torchweb._inplace_functions as extra
    names = sorted(n + "_" for n in TORCH_INPLACE) + extra.__all__
    return [n for n in names if n not in SKIP]


def test_the_registry_list_is_pytorchs():
    for n in TORCH_INPLACE:
        assert hasattr(torch, n + "_"), n
        assert any(op.inplace is not None and n in (op.name,) + op.aliases for op in OPS.values()), n
        assert getattr(torchweb, n + "_").__wrapped__ is getattr(torchweb.Tensor, n + "_")


def test_every_pytorch_inplace_function_is_covered_or_known():
    missing = [n for n in dir(torch) if n.endswith("_") and not n.startswith("_") and not hasattr(torchweb, n)]
    # as_strided_ (restriding in place), resize_as_ / resize_as_sparse_ (storage resizing) and
    # conj_physical_ (complex, issue 20) are not provided
    assert set(missing) <= {"as_strided_", "conj_physical_", "resize_as_", "resize_as_sparse_"}, missing


def _inputs(name, device):
    if name in INTEGER:
        x = make((3, 4), dtype=torch.int64, low=-9, high=9)
    elif name in POSITIVE:
        x = make((3, 4), low=1.1, high=4)
    elif name in UNIT:
        x = make((3, 4), low=0.05, high=0.95)
    else:
        x = make((3, 4))
    extra = []
    for a in ARGS.get(name, ()):
        if a == "other":
            o = make((3, 4), dtype=x.dtype, low=-3 if name == "ldexp_" else 0.1, high=5)
            extra.append((o if name != "ldexp_" else o.round(), None))
        elif a == "mat":
            extra.append((make((3, 4, 5))[..., 0].reshape(-1)[:12].reshape(4, 3)[:3], None))
        elif a == "vec":
            pass
        else:
            extra.append((None, a))
    return x, extra


@pytest.mark.parametrize("name", _names())
def test_torch_inplace_function(device, name):
    if name == "addmv_":
        x, m, v = make((3,)), make((3, 4)), make((4,))
        ours_x = ours(x, device)
        r = torchweb.addmv_(ours_x, ours(m, device), ours(v, device), beta=0.5, alpha=2)
        assert r is ours_x
        assert_close(ours_x, torch.addmv_(x, m, v, beta=0.5, alpha=2), rtol=1e-4)
        return
    x, extra = _inputs(name, device)
    t_args = [t if t is not None else v for t, v in extra]
    w_args = [ours(t, device) if t is not None else v for t, v in extra]
    mine = ours(x, device)
    expected = getattr(torch, name)(x, *t_args)
    got = getattr(torchweb, name)(mine, *w_args)
    assert got is mine, f"torch.{name} must return its input"
    if name in (n + "_" for n in TORCH_INPLACE) and not w_args:      # PyTorch's keyword: input=
        again = ours(x, device)
        assert getattr(torchweb, name)(input=again, *w_args) is again
    assert_close(mine, x, rtol=1e-4, atol=1e-5)
    assert expected is x


def test_zero_fill_detach(device):
    a = ours(make((2, 3)), device)
    assert torchweb.zero_(a) is a
    assert_close(a, torch.zeros(2, 3))
    b = ours(make((2, 3)), device, requires_grad=True) * 2
    torchweb.detach_(b)
    assert not b.requires_grad and b.grad_fn is None


def test_index_put_and_embedding_renorm(device):
    x, idx, val = make((5, 3)), torch.tensor([0, 3]), make((2, 3))
    mine = ours(x, device)
    assert torchweb.index_put_(mine, (ours(idx, device),), ours(val, device)) is mine
    assert_close(mine, torch.index_put_(x, (idx,), val))
    w, i = make((6, 4)) * 3, torch.tensor([[1, 4], [1, 0]])
    mw = ours(w, device)
    assert torchweb.embedding_renorm_(mw, ours(i, device), 1.5, 2.0) is mw
    with torch.no_grad():
        torch.embedding_renorm_(w, i, 1.5, 2.0)
    assert_close(mw, w, rtol=1e-5)


def test_inplace_dropout_in_training_changes_the_input(device):
    x = ours(torch.ones(200), device)
    assert torchweb.dropout_(x, 0.5, True) is x
    vals = set(x.tolist())
    assert vals <= {0.0, 2.0} and len(vals) == 2
    f = ours(torch.ones(50, 4, 3), device)
    assert torchweb.feature_dropout_(f, 0.5, True) is f
    per_channel = f.reshape(200, 3).tolist()
    assert all(len(set(row)) == 1 and row[0] in (0.0, 2.0) for row in per_channel)
    with pytest.raises(RuntimeError):
        torch.feature_dropout(torch.ones(3), 0.5, True)
    with pytest.raises(RuntimeError):
        torchweb.feature_dropout(ours(torch.ones(3), device), 0.5, True)
    assert_close(torchweb.feature_dropout(ours(torch.ones(2, 3), device), 0.5, False), torch.ones(2, 3))


BLENDS = {
    "addmv_": lambda m, x, a, b: x[0].clone().addmv_(a, b[0], beta=0.5, alpha=2),
    "addmm_": lambda m, x, a, b: x.clone().addmm_(a, b.t(), alpha=3),
    "addr_": lambda m, x, a, b: x.clone().addr_(a[:, 0], b[:, 1], beta=2),
    "baddbmm_": lambda m, x, a, b: x.clone().unsqueeze(0).baddbmm_(a.unsqueeze(0), b.t().unsqueeze(0)),
    "addbmm_": lambda m, x, a, b: x.clone().addbmm_(a.unsqueeze(0).expand(2, 3, 5), b.t().unsqueeze(0).expand(2, 5, 3)),
    "bad_shape": lambda m, x, a, b: x[:1].clone().addmm_(a, b.t()),
}


@pytest.mark.parametrize("name", BLENDS)
def test_tensor_inplace_blends(device, name):
    from oracle import check
    check(BLENDS[name], make((3, 3)), make((3, 5)), make((3, 5)), device=device, rtol=1e-4, atol=1e-5)


def test_inplace_blends_take_pytorchs_keywords(device):
    from oracle import check
    check(lambda m, x, a, b: x[0].clone().addmv_(mat=a, vec=b[0]), make((3, 3)), make((3, 5)), make((3, 5)),
          device=device, rtol=1e-4)
    check(lambda m, x, a, b: x.clone().addr_(a[:, 0], vec2=b[:, 1], alpha=2), make((3, 3)), make((3, 5)),
          make((3, 5)), device=device, rtol=1e-4)
    check(lambda m, x, a, b: m.addmv_(x[0].clone(), a, b[0]), make((3, 3)), make((3, 5)), make((3, 5)),
          device=device, rtol=1e-4)
