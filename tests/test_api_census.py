"""The census of PyTorch's API (scripts/api_census.py) as tests: no name of the covered
namespaces is missing (each works or is refused with a reason), no keyword PyTorch's signatures
take is rejected, refused names behave as on a PyTorch build without the feature, and
docs/api.md is current."""

import os
import sys
import warnings

import pytest
import torch

import torchweb
from oracle import assert_close, ours

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "scripts"))
import api_census  # noqa: E402

CENSUS = api_census.census()
COVERED = [label for label, _, covered in api_census.NAMESPACES if covered]


@pytest.mark.parametrize("label", COVERED)
def test_no_missing_name(label):
    missing = [name for name, status, _ in CENSUS[label] if status == "missing"]
    assert missing == [], f"torch.{label}: {len(missing)} names neither work nor are refused: {missing}"


def test_no_keyword_miss():
    misses = api_census.keyword_misses()
    assert misses == {}, "keywords PyTorch takes that torchweb rejects:\n" + "\n".join(
        f"  {k}: {v}" for k, v in sorted(misses.items()))


def test_docs_api_md_is_current():
    with open(os.path.join(api_census.ROOT, "docs", "api.md")) as f:
        assert f.read() == api_census.render(CENSUS), "docs/api.md is stale: run python scripts/api_census.py"


def _refused(label):
    return [(n, why) for n, s, why in CENSUS[label] if s == "refused"]


@pytest.mark.parametrize("label", COVERED)
def test_refused_names_raise_attribute_error_with_the_reason(label):
    ns = api_census.resolve(torchweb, "" if label == "torch" else label)
    for name, why in _refused(label):
        assert not hasattr(ns, name), name
        with pytest.raises(AttributeError, match="not supported by torchweb"):
            getattr(ns, name)
        if label == "Tensor":   # a tensor refuses it as its class does
            assert not hasattr(torchweb.zeros(1), name), name


def test_unknown_names_keep_pythons_message():
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        torchweb.no_such_name
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        torchweb.nn.functional.no_such_name


# -- keywords, called as scripts call them, against PyTorch ----------------------------------

def test_input_and_other_keywords(device):
    a = torch.arange(12.).reshape(3, 4)
    x = ours(a, device)
    assert_close(torchweb.sum(input=x, dim=1), torch.sum(input=a, dim=1))
    assert_close(torchweb.matmul(input=x, other=x.t()), torch.matmul(input=a, other=a.t()))
    assert_close(torchweb.mm(input=x, mat2=x.t()), torch.mm(input=a, mat2=a.t()))
    assert_close(torchweb.softmax(input=x, dim=0), torch.softmax(input=a, dim=0))
    assert_close(x.permute(dims=(1, 0)), a.permute(dims=(1, 0)))
    assert_close(x.reshape(shape=(4, 3)), a.reshape(shape=(4, 3)))
    assert_close(torchweb.reshape(input=x, shape=(2, 6)), torch.reshape(input=a, shape=(2, 6)))
    assert_close(x.view(size=(6, 2)), a.view(size=(6, 2)))
    assert_close(x.repeat(repeats=(1, 2)), a.repeat(repeats=(1, 2)))
    assert_close(x.expand(size=(2, 3, 4)), a.expand(size=(2, 3, 4)))
    assert_close(torchweb.swapaxes(x, axis0=0, axis1=1), torch.swapaxes(a, axis0=0, axis1=1))
    assert_close(x.split(split_size=2, dim=1), a.split(split_size=2, dim=1))
    assert_close(torchweb.tensor_split(x, sections=2, dim=1), torch.tensor_split(a, sections=2, dim=1))
    assert_close(torchweb.tensor_split(x, indices=[1, 3], dim=1), torch.tensor_split(a, indices=[1, 3], dim=1))
    assert_close(torchweb.mean(x, axis=0) if "axis" in _kw(torchweb.mean) else torchweb.mean(x, dim=0),
                 torch.mean(a, dim=0))


def _kw(fn):
    import inspect
    return inspect.signature(fn).parameters


def test_factories_take_size_layout_and_pin_memory(device):
    for name in ("zeros", "ones", "empty"):
        t = getattr(torchweb, name)(size=(2, 3), layout=torchweb.strided if hasattr(torchweb, "strided") else None,
                                    pin_memory=False, device=device)
        assert tuple(t.shape) == (2, 3)
    assert_close(torchweb.ones(size=(2,), device=device), torch.ones(size=(2,)))
    with pytest.raises(RuntimeError, match="layout"):
        torchweb.zeros(2, layout="torch.sparse_coo", device=device)
    with pytest.raises(RuntimeError, match="named tensors"):
        torchweb.full((2,), 1.0, names=("a",), device=device)


def test_out_fills_resizes_and_checks_dtype(device):
    a = torch.arange(6.).reshape(2, 3)
    x = ours(a, device)
    o = torchweb.empty(0, device=device)
    r = torchweb.sum(x, 1, out=o)
    assert r is o
    assert_close(o, torch.sum(a, 1))
    o2 = torchweb.zeros(5, device=device)
    e2 = torch.zeros(5)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        torchweb.cumsum(x, 0, out=o2)
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        torch.cumsum(a, 0, out=e2)
    assert_close(o2, e2)
    assert [type(w.message) for w in got] == [type(w.message) for w in want] == [UserWarning]
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        torchweb.sum(x, out=torchweb.empty(0, dtype=torchweb.long, device=device))
    v, i = torchweb.empty(0, device=device), torchweb.empty(0, dtype=torchweb.long, device=device)
    res = torchweb.max(x, 1, out=(v, i))
    ev, ei = torch.max(a, 1)
    assert_close((v, i), (ev, ei))
    assert res.values is v and res.indices is i
    z = torchweb.empty(2, 2, device=device)
    torchweb.zeros(2, 2, out=z)
    assert_close(z, torch.zeros(2, 2))
    r = torchweb.arange(4, out=torchweb.empty(0, device=device))
    assert_close(r, torch.arange(4, out=torch.empty(0)))
    w = torchweb.ones(2, 3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        torchweb.sum(w, 0, out=torchweb.empty(3, device=device))


def test_round_decimals(device):
    a = torch.tensor([1.2345, -2.5, 0.5, 1.5, 123.456, -0.049])
    x = ours(a, device)
    for d in (0, 1, 2, -1, -2):
        assert_close(torchweb.round(x, decimals=d), torch.round(a, decimals=d))
        assert_close(x.round(decimals=d), a.round(decimals=d))
    y, b = x.clone(), a.clone()
    y.round_(decimals=1)
    b.round_(decimals=1)
    assert_close(y, b)


def test_result_type_overloads():
    a, x = torch.ones(2, dtype=torch.int32), torchweb.ones(2, dtype=torchweb.int32)
    assert str(torchweb.result_type(tensor=x, other=1.5)) == str(torch.result_type(tensor=a, other=1.5))
    assert str(torchweb.result_type(scalar=2, tensor=x)) == str(torch.result_type(scalar=2, tensor=a))
    assert str(torchweb.result_type(scalar1=1, scalar2=1.0)) == str(torch.result_type(scalar1=1, scalar2=1.0))
    assert str(torchweb.promote_types(type1=torchweb.int32, type2=torchweb.float16)) == \
        str(torch.promote_types(type1=torch.int32, type2=torch.float16))


def test_random_keywords_and_rng_state(device):
    torchweb.manual_seed(0)
    x = torchweb.empty(1000, device=device).uniform_(**{"from": 2.0, "to": 3.0})
    assert 2.0 <= x.min().item() and x.max().item() < 3.0
    y = torchweb.empty(2000, device=device).normal_(mean=5.0, std=0.1)
    assert abs(y.mean().item() - 5.0) < 0.02
    state = torchweb.get_rng_state()
    a = torchweb.rand(4, device=device).tolist()
    torchweb.set_rng_state(state)
    assert torchweb.rand(4, device=device).tolist() == a
    with pytest.raises(TypeError, match="unexpected keyword"):
        torchweb.empty(2, device=device).uniform_(low=1.0)


def test_tensor_takes_any_sequence_pytorch_takes():
    import array
    import collections
    for data in (collections.deque([1, 2, 3]), range(4), array.array("f", [1.5, 2.0]),
                 array.array("i", [1, 2]), [range(2), collections.deque([3, 4])], (1, 2.5)):
        got, want = torchweb.tensor(data), torch.tensor(data)
        assert got.tolist() == want.tolist() and str(got.dtype) == str(want.dtype), data
    for bad in ("ab", b"ab", {1, 2}):
        with pytest.raises(Exception) as want:
            torch.tensor(bad)
        with pytest.raises(want.type):
            torchweb.tensor(bad)


def test_process_switches_scripts_set():
    torchweb.set_num_threads(2)
    assert torchweb.get_num_threads() == 2
    torchweb.set_num_threads(1)
    with pytest.raises(RuntimeError):
        torchweb.set_num_threads(0)
    torchweb.set_deterministic_debug_mode("warn")
    assert torchweb.get_deterministic_debug_mode() == 1 and torchweb.are_deterministic_algorithms_enabled()
    torchweb.set_deterministic_debug_mode(0)
    assert not torchweb.are_deterministic_algorithms_enabled()
    assert torchweb.set_flush_denormal(True) is False
