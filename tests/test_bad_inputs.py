"""The bad-input catalog (tests/fuzz/bad_inputs.py, 300+ mistakes across the API) against
PyTorch: each case raises PyTorch's exception type in torchweb too, torchweb's message names
what is wrong, and the device still computes right afterwards. tests/test_errors.py holds the
cases whose messages match PyTorch's word for word."""

import re
import warnings

import pytest
import torch

import torchweb
from fuzz.bad_inputs import CASES
from oracle import assert_close, make, ours

BY_NAME = {c.name: c for c in CASES}
DEVICE_CASES = [c.name for c in CASES if not c.cpu_only]
HOST_CASES = [c.name for c in CASES if c.cpu_only]
# words too common to say what is wrong
_COMMON = {"tensor", "tensors", "expected", "must", "with", "that", "this", "have", "than", "should", "argument",
           "arguments", "input", "got", "but", "the", "and", "for", "not", "only", "when", "which", "are", "can",
           "cannot", "does", "from", "will", "type", "value", "torch", "error", "object"}


def _force(result):
    """Read results back, so that errors only the GPU sees are raised (torchweb raises them at
    the next readback, PyTorch at the call)."""
    if isinstance(result, (tuple, list)):
        for r in result:
            _force(r)
    elif isinstance(result, (torch.Tensor, torchweb.Tensor)):
        result.tolist()


def _python_type(exc):
    """PyTorch's exception class, or the builtin it derives from where it is torch's own
    (torch._C._LinAlgError is a RuntimeError)."""
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins":
            return cls
    return Exception


def _words(msg):
    return {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z_]{3,}", msg)} - _COMMON


def names_what_is_wrong(mine, theirs, key):
    """torchweb's message says what is wrong: the key words (in both), else PyTorch's message
    itself, else a word of PyTorch's message and (where PyTorch names sizes or dims) one of its
    numbers."""
    if key is not None:
        for k in (key,) if isinstance(key, str) else key:
            assert k.lower() in theirs.lower(), f"key {k!r} not in PyTorch's message {theirs!r}"
            assert k.lower() in mine.lower(), f"torchweb's message {mine!r} lacks {k!r} (PyTorch: {theirs!r})"
        return
    if mine == theirs:
        return
    if "found by the GPU" in mine:   # a kernel's error flag: "<what> (in <op> on webgpu: found by the GPU...)"
        mine = mine.split(" (in ")[0]
        if mine == "index out of range":   # the flag does not carry the index
            assert "out of" in theirs, theirs
            return
    assert _words(mine) & _words(theirs), f"torchweb's message {mine!r} shares no word with PyTorch's {theirs!r}"
    numbers = set(re.findall(r"\d+", re.sub(r"\(position \d+\)", "", theirs)))
    if numbers:
        assert numbers & set(re.findall(r"\d+", mine)), \
            f"torchweb's message {mine!r} names none of PyTorch's numbers {sorted(numbers)} ({theirs!r})"


def still_works(device):
    a, b = make((4, 5)), make((5, 3))
    x, y = ours(a, device), ours(b, device)
    assert_close((x @ y).relu() + x.sum(1, keepdim=True), (a @ b).relu() + a.sum(1, keepdim=True), atol=1e-4)


def check_case(case, device):
    x = make(case.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as theirs:
            _force(case.fn(torch, x.clone()))
        expected = _python_type(theirs.value)
        saved = torchweb.get_default_device()
        torchweb.set_default_device(device)
        try:
            with pytest.raises(Exception) as mine:
                _force(case.fn(torchweb, ours(x, device)))
        finally:
            torchweb.set_default_device(saved)
    assert isinstance(mine.value, expected), \
        f"{case.name}: torchweb raised {type(mine.value).__name__}: {mine.value}\n" \
        f"PyTorch raised {type(theirs.value).__name__}: {theirs.value}"
    names_what_is_wrong(str(mine.value), str(theirs.value), case.key)
    still_works(device)


def test_catalog_size():
    assert len(CASES) >= 300 and len(BY_NAME) == len(CASES)


# Known differences, left for later (fixing one turns its test into a failure that says to remove it here)
KNOWN = {}
KNOWN_ON_CPU = {}   # (cases only the cpu device gets wrong)


@pytest.mark.parametrize("name", DEVICE_CASES)
def test_bad_input(device, name):
    reason = KNOWN.get(name) or (KNOWN_ON_CPU.get(name) if device == "cpu" else None)
    if reason is None:
        check_case(BY_NAME[name], device)
        return
    try:
        check_case(BY_NAME[name], device)
    except (AssertionError, pytest.fail.Exception):
        pytest.xfail(reason)
    pytest.fail(f"{name} passes now: remove it from KNOWN")


@pytest.mark.parametrize("name", HOST_CASES)
def test_bad_input_host(name):
    check_case(BY_NAME[name], "cpu")


# -- the legal forms next to the refused ones (the fixes must leave these as PyTorch has them) --
def _writes_to_views(m, x, pieces):
    """In-place writes PyTorch allows on views: pieces(x*1) gives them; the gradient flows."""
    w = x.clone().requires_grad_(True)
    y = w * 1
    for i, v in enumerate(pieces(m, y)):
        v.mul_(i + 2)
    (y * y).sum().backward()
    return y.detach(), w.grad


@pytest.mark.parametrize("how", ["tensor_split", "unsafe_split", "unsafe_chunk", "no_grad", "detach"])
def test_inplace_on_views_allowed(device, how):
    pieces = {"tensor_split": lambda m, y: y.tensor_split(2),
              "unsafe_split": lambda m, y: m.unsafe_split(y, 1),
              "unsafe_chunk": lambda m, y: m.unsafe_chunk(y, 2),
              "no_grad": lambda m, y: _no_grad_unbind(m, y),
              "detach": lambda m, y: [v.detach() for v in y.unbind(0)]}[how]
    x = make((2, 3))
    expected = _writes_to_views(torch, x, pieces)
    got = _writes_to_views(torchweb, ours(x, device), pieces)
    assert_close(got[0], expected[0])
    if not how.startswith("unsafe"):   # (PyTorch's unsafe_ views are not views to autograd: a
        assert_close(got[1], expected[1])   # gradient torchweb, with no unsafe aliasing, does not copy)


def _no_grad_unbind(m, y):
    with m.no_grad():   # views made and written without autograd
        for v in y.unbind(0):
            v.add_(1)
    return ()


@pytest.mark.parametrize("fn", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 3, 4), (2, 3, 4, 5)])
def test_functional_softmax_implicit_dim(device, fn, shape):
    """F.softmax(x) without dim: PyTorch's deprecation warning and legacy dim (0 for 0, 1 and
    3 dims, else 1), where torch.softmax(x) is a TypeError (the catalog's softmax_no_dim_arg)."""
    x = make(shape)
    with pytest.warns(UserWarning, match="Implicit dimension choice") as theirs:
        expected = getattr(torch.nn.functional, fn)(x)
    with pytest.warns(UserWarning, match="Implicit dimension choice") as mine:
        got = getattr(torchweb.nn.functional, fn)(ours(x, device))
    assert str(mine[0].message) == str(theirs[0].message)
    assert_close(got, expected)


def test_bernoulli_legal_p(device):
    """p at the ends of [0, 1] is legal (no error queued on the device): all 0s, all 1s."""
    p = ours(torch.tensor([0.0, 1.0, 0.0, 1.0]), device)
    assert torchweb.bernoulli(p).tolist() == torch.bernoulli(torch.tensor([0.0, 1.0, 0.0, 1.0])).tolist()
    assert torchweb.ones(3, device=device).bernoulli_(p[:3]).tolist() == [0.0, 1.0, 0.0]
    still_works(device)
