"""The op registry (ops/registry.py): every op reachable where it says, under names PyTorch has,
documented, and no float op that silently drops its gradient."""

import os
import sys

import pytest
import torch

import torchweb
from torchweb.ops.elementwise.table import OPS as ROWS
from torchweb.ops.registry import ALL_DTYPES, OPS

ENTRIES = sorted(OPS)


def _op_of(f):
    """The op behind a public name: itself, or the op a float64 dispatcher routes to when no
    argument is a float64 tensor (torchweb/host64/: float64 is held on the host)."""
    return f.__wrapped__ if getattr(f, "_routes_float64", False) else f


@pytest.mark.parametrize("key", ENTRIES)
def test_entry_is_reachable_under_pytorchs_names(key):
    op = OPS[key]
    assert op.doc, f"{key} has no docstring"
    names = (op.name,) + op.aliases
    for n in names:
        if op.torch:
            assert _op_of(getattr(torchweb, n)) is op.torch_fn
            assert hasattr(torch, n), f"torch.{n} does not exist in PyTorch"
        if op.method:
            assert getattr(torchweb.Tensor, n) is op.fn
            assert hasattr(torch.Tensor, n), f"Tensor.{n} does not exist in PyTorch"
        if op.inplace is not None:
            assert getattr(torchweb.Tensor, n + "_") is op.inplace
            assert hasattr(torch.Tensor, n + "_"), f"Tensor.{n}_ does not exist in PyTorch"
    if op.functional:
        assert _op_of(getattr(torchweb.nn.functional, op.name)) is op.torch_fn
        assert hasattr(torch.nn.functional, op.name)


# rows that are internal steps of other ops, never differentiated through by a user
_INTERNAL = {"fill"}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_float_rows_have_a_backward_or_refuse(name):
    """A float op with no backward rule must raise when its gradient is needed."""
    row = ROWS[name]
    if row.grad is not None or row.rule not in ("arith", "float") or name in _INTERNAL:
        return
    from torchweb.ops.elementwise import call
    x = torchweb.ones(3, requires_grad=True, device="cpu")
    with pytest.raises(NotImplementedError, match=name):
        call(name, *([x] * row.nin))


def test_every_public_row_is_registered():
    for name, row in ROWS.items():
        if row.api:
            assert name in OPS and OPS[name].differentiable == (row.grad is not None)


def _required_positional(fn):
    import inspect
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    return sum(1 for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def _second_is_an_index(fn):
    """fn(x, x) would pass x as an index or mask: the claim is about the input, not those."""
    import inspect
    second = list(inspect.signature(fn).parameters)[1]
    return any(w in second for w in ("index", "indices", "mask"))


def _dtype_sample(key):
    """{dtype name: accepted?} for op `key` called as fn(x) or fn(x, x), x a small cpu tensor of
    each dtype (values 1..3, no zeros: integer divisions stay defined); None when that call does
    not fit the op (more required arguments, or no claimed dtype passes: it needs shapes or
    arguments of its own)."""
    import warnings
    op = OPS[key]
    n = _required_positional(op.fn)
    if n not in (1, 2) or (n == 2 and _second_is_an_index(op.fn)):
        return None
    got = {}
    for name in ALL_DTYPES:
        x = torchweb.tensor([[1, 2, 3], [2, 1, 1]], device="cpu").to(getattr(torchweb, name))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                op.fn(*([x] * n))
            got[name] = True
        except (RuntimeError, TypeError, NotImplementedError, ValueError, IndexError):
            got[name] = False
    if not any(got[d] for d in op.accepts):
        return None
    return got


@pytest.mark.parametrize("key", ENTRIES)
def test_claimed_dtypes_are_the_accepted_ones(key):
    """docs/ops.md's dtypes column (OpDef.accepts) cannot lie: each claimed dtype runs and each
    other one raises, sampled on the cpu device wherever a one- or two-tensor call fits."""
    got = _dtype_sample(key)
    if got is None:
        return
    claimed = OPS[key].accepts
    assert [d for d in claimed if not got[d]] == [], f"{key}: claimed but refused"
    assert [d for d in ALL_DTYPES if got[d] and d not in claimed] == [], f"{key}: accepted but not claimed"


def test_dtype_claims_are_sampled_widely():
    sampled = [k for k in ENTRIES if _dtype_sample(k) is not None]
    assert len(sampled) >= 200, (len(sampled), len(ENTRIES))


def test_ops_doc_is_up_to_date():
    root = os.path.join(os.path.dirname(__file__), "..")
    sys.path.insert(0, os.path.join(root, "scripts"))
    from ops_doc import render
    with open(os.path.join(root, "docs", "ops.md")) as f:
        assert f.read() == render(), "docs/ops.md is stale: run python scripts/ops_doc.py"


def test_a_float_op_without_backward_raises(monkeypatch):
    """The rule behind test_float_rows_have_a_backward_or_refuse, shown on a row whose backward
    is taken away: its gradient is refused, naming the op, instead of silently missing."""
    import dataclasses
    from torchweb.ops import elementwise as pointwise
    from torchweb.ops.elementwise import table as elementwise_table
    from torchweb.ops.elementwise import autograd as elementwise_autograd
    monkeypatch.setitem(elementwise_table.OPS, "exp", dataclasses.replace(ROWS["exp"], grad=None))
    # (the Functions made per op are cached: a row changed at run time needs a fresh cache)
    monkeypatch.setattr(elementwise_autograd, "_FUNCTIONS", {})
    x = torchweb.ones(3, requires_grad=True, device="cpu")
    with pytest.raises(NotImplementedError, match="'exp'"):
        pointwise.call("exp", x)
    with torchweb.no_grad():
        assert pointwise.call("exp", x).requires_grad is False


def test_backends_never_import_ops():
    """Layers run one way: ops -> lowering -> backends -> drivers."""
    import pathlib
    root = pathlib.Path(torchweb.__file__).parent / "backends"
    for path in root.rglob("*.py"):
        text = path.read_text()
        for bad in ("from ...ops", "from ..ops", "from torchweb.ops", "import torchweb.ops"):
            assert bad not in text, f"{path.relative_to(root)} imports ops ({bad})"
