"""out= of the ops that spell it in their own signature (ops/pointwise_api.py, ops/math_api.py,
ops/composite/predicates.py, torch.special) follows PyTorch's one rule (ops/out_arg.py
write_out): a result that cannot be cast to out's dtype is refused, out of another shape is
resized (with PyTorch's warning when it held elements), out is returned, and inputs that
require grad are refused. Each case against PyTorch 2.13."""

import warnings

import pytest
import torch

import torchweb

from oracle import assert_close, make, ours

OPS = {
    "special.expit": lambda m, x, y, **kw: m.special.expit(x, **kw),
    "add": lambda m, x, y, **kw: m.add(x, y, alpha=2, **kw),
    "clamp": lambda m, x, y, **kw: m.clamp(x, min=-1.0, **kw),
    "where": lambda m, x, y, **kw: m.where(x > 0, x, y, **kw),
    "logit": lambda m, x, y, **kw: m.logit(x, **kw),
    "lerp": lambda m, x, y, **kw: m.lerp(x, y, 0.3, **kw),
    "addcmul": lambda m, x, y, **kw: m.addcmul(x, x, y, value=0.5, **kw),
    "round": lambda m, x, y, **kw: m.round(x, decimals=1, **kw),
    "isposinf": lambda m, x, y, **kw: m.isposinf(x, **kw),
    "isneginf": lambda m, x, y, **kw: m.isneginf(x, **kw),
    "special.i1": lambda m, x, y, **kw: m.special.i1(x, **kw),
    "special.ndtr": lambda m, x, y, **kw: m.special.ndtr(x, **kw),
    "special.entr": lambda m, x, y, **kw: m.special.entr(x, **kw),
    "special.xlog1py": lambda m, x, y, **kw: m.special.xlog1py(x, y, **kw),
    "special.i0e": lambda m, x, y, **kw: m.special.i0e(x, **kw),
    "special.modified_bessel_i0": lambda m, x, y, **kw: m.special.modified_bessel_i0(x, **kw),
}

# out= tensors, made from the result PyTorch gives without out=
OUTS = {
    "same": lambda r: torch.zeros_like(r),
    "int32": lambda r: torch.zeros(r.shape, dtype=torch.int32),        # float -> int: refused
    "float32": lambda r: torch.zeros(r.shape, dtype=torch.float32),    # bool -> float: cast (predicates refuse)
    "other_shape": lambda r: torch.zeros((2, 2), dtype=r.dtype),       # resized, with the warning
    "empty": lambda r: torch.zeros((0,), dtype=r.dtype),               # resized, silently
}


def _run(m, fn, x, y, out):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn(m, x, y, out=out)
    resized = [str(i.message) for i in w if "was resized" in str(i.message)]
    return r, resized


@pytest.mark.parametrize("kind", list(OUTS))
@pytest.mark.parametrize("name", list(OPS))
def test_out_follows_pytorch(name, kind, device):
    fn = OPS[name]
    x = make((3,))
    x[2] = float("inf")
    y = make((3,))
    out_t = OUTS[kind](fn(torch, x, y))
    x_w, y_w, out_w = ours(x, device), ours(y, device), ours(out_t, device)
    try:
        r_t, warned_t = _run(torch, fn, x, y, out_t)
    except Exception as e:
        with pytest.raises(type(e)):
            _run(torchweb, fn, x_w, y_w, out_w)
        return
    r_w, warned_w = _run(torchweb, fn, x_w, y_w, out_w)
    assert r_t is out_t and r_w is out_w
    assert bool(warned_w) == bool(warned_t), (warned_w, warned_t)
    assert_close(out_w, out_t, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["add", "logit", "lerp", "addcmul", "special.i1", "special.i0e",
                                  "special.modified_bessel_i0"])
def test_out_with_inputs_that_require_grad(name, device):
    fn = OPS[name]
    x, y = make((3,)), make((3,))
    out = torch.zeros(3)
    try:
        fn(torch, x.requires_grad_(), y, out=out)
    except Exception as e:
        with pytest.raises(type(e)):
            fn(torchweb, ours(x, device, requires_grad=True), ours(y, device), out=torchweb.zeros(3, device=device))
        return
    got = torchweb.zeros(3, device=device)
    fn(torchweb, ours(x, device, requires_grad=True), ours(y, device), out=got)
    assert_close(got, out.detach())


def test_out_must_be_a_tensor(device):
    x = ours(make((3,)), device)
    with pytest.raises(TypeError):
        torch.special.i1(torch.zeros(3), out=[0.0, 0.0, 0.0])
    with pytest.raises(TypeError):
        torchweb.special.i1(x, out=[0.0, 0.0, 0.0])
