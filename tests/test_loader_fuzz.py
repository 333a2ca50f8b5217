"""Hostile files, fuzzed: torchweb.load (zip + restricted unpickler), torchweb.safetensors and
torchweb.hub.load_state_dict_from_url's inputs. Every input loads or raises one of the
documented exceptions (fuzz/hostile_files.py LOADER_ERRORS), no gadget ever runs (even with
weights_only=False), and files that claim 2^40 elements or 2^60 bytes allocate nothing
(tracemalloc's peak). The strategies are in tests/fuzz/hostile_files.py.

    pytest tests/test_loader_fuzz.py                       CI: a few hundred examples, seconds
    TORCHWEB_FUZZ=long pytest tests/test_loader_fuzz.py    long: TORCHWEB_FUZZ_LOADERS examples
                                                           per test (default 5000), random seed
    python bench/fuzz_loaders.py -n 20000                  the same, with counts per outcome
"""

import os
import pickle
import tracemalloc
import warnings

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import torchweb
from fuzz import hostile_files as H
from torchweb.serialization.safetensors import parse_header

LONG = os.environ.get("TORCHWEB_FUZZ", "").lower() == "long"
EXAMPLES = int(os.environ.get("TORCHWEB_FUZZ_LOADERS", "5000")) if LONG else 150
FUZZ = settings(max_examples=EXAMPLES, derandomize=not LONG, database=None, deadline=None,
                suppress_health_check=list(HealthCheck))
MEMORY_LIMIT = 8 << 20   # bytes a load of a file of a few hundred bytes may take at its peak
OUTCOMES = {}            # (test, outcome) -> count, printed by bench/fuzz_loaders.py


def count(test, outcome):
    OUTCOMES[(test, outcome)] = OUTCOMES.get((test, outcome), 0) + 1


def load_pt(data, device="cpu", weights_only=True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torchweb.load(data, map_location=device, weights_only=weights_only)


def load_st(data, device="cpu"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torchweb.safetensors.load(data, device=device)


def loads_or_refuses(test, fn, data, *args):
    """fn(data) returns, or raises a documented exception; no gadget ran. The outcome counted."""
    try:
        out = fn(data, *args)
    except H.LOADER_ERRORS as e:
        count(test, type(e).__name__)
        out = None
    else:
        count(test, "loaded")
    assert not H.GADGET_RAN, f"a gadget ran: {H.GADGET_RAN}"
    return out


def check_loaded_tensors(out):
    """What loads is usable: every tensor reads back with its own shape."""
    stack = [out]
    while stack:
        v = stack.pop()
        if isinstance(v, torchweb.Tensor):
            assert len(v.flatten().tolist()) == v.numel()
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple, set)):
            stack.extend(v)


# -- torch.load -------------------------------------------------------------------------------------
@FUZZ
@given(H.mutated_checkpoint(), st.booleans())
def test_mutated_checkpoints(data, weights_only):
    out = loads_or_refuses("mutated_checkpoint", load_pt, data, "cpu", weights_only)
    check_loaded_tensors(out)


def torch_refusal(data):
    """None where PyTorch's weights-only reader loads the file, else its message."""
    import io
    import torch
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
    except Exception as e:   # noqa: BLE001 - any refusal
        return str(e)
    return None


@FUZZ
@given(H.mutated_pickle_checkpoint())
def test_mutated_pickles(data):
    """What torchweb loads, PyTorch's weights-only reader loads too, but for the harmless
    opcodes torchweb reads and PyTorch's does not (POP, POP_MARK, DUP, ...). The reverse is
    counted: PyTorch also takes a few broken ids that torchweb refuses (a storage's location
    that is not a string, which map_location="cpu" lets PyTorch ignore)."""
    out = loads_or_refuses("mutated_pickle", load_pt, data)
    check_loaded_tensors(out)
    refusal = torch_refusal(data)
    if out is not None and refusal is not None:
        assert "Unsupported operand" in refusal, f"torchweb loads it, PyTorch refuses it: {refusal[-300:]}"
        count("mutated_pickle", "torchweb loads, PyTorch lacks the opcode")
    elif out is None and refusal is None:
        count("mutated_pickle", "PyTorch loads, torchweb refuses")


@settings(FUZZ, max_examples=EXAMPLES if LONG else 80)   # (hypothesis takes ~60 ms to draw one)
@given(H.opcode_pickle(), st.booleans())
def test_opcode_pickles(pkl, weights_only):
    loads_or_refuses("opcode_pickle", load_pt, H.with_pickle(pkl), "cpu", weights_only)


@settings(max_examples=max(EXAMPLES // 5, 30), derandomize=not LONG, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(H.mutated_checkpoint())
def test_mutated_checkpoints_webgpu(data):
    check_loaded_tensors(loads_or_refuses("mutated_checkpoint_webgpu", load_pt, data, "webgpu"))


@pytest.mark.parametrize("weights_only", [True, False])
def test_gadgets_never_run(tmp_path, weights_only):
    """Every known gadget shape is refused with UnpicklingError naming what it wanted, and runs
    nothing, also with weights_only=False (torchweb keeps the allow-list; PyTorch would run it)."""
    marker = tmp_path / "ran"
    for name, pkl in H.gadget_pickles(marker):
        with pytest.raises(pickle.UnpicklingError):
            load_pt(H.with_pickle(pkl), weights_only=weights_only)
        assert not marker.exists() and not H.GADGET_RAN, name


def test_pytorch_refuses_the_gadgets_too(tmp_path):
    """PyTorch's weights_only reader refuses the same files (the behaviour torchweb follows)."""
    import io
    import torch
    marker = tmp_path / "ran"
    for name, pkl in H.gadget_pickles(marker):
        with pytest.raises(Exception):
            torch.load(io.BytesIO(H.with_pickle(pkl)), weights_only=True)
        assert not marker.exists() and not H.GADGET_RAN, name


# -- safetensors ------------------------------------------------------------------------------------
def _package_verdict(data):
    """Whether the safetensors package accepts the file's header (None: no package here)."""
    try:
        from safetensors import deserialize
    except ImportError:
        return None
    try:
        deserialize(data)
    except Exception:   # noqa: BLE001 - the package's errors (SafetensorError, ...) all mean "refused"
        return False
    return True


def same_verdict_as_package(data):
    """torchweb refuses as malformed exactly the files the safetensors package refuses."""
    theirs = _package_verdict(data)
    if theirs is None:
        return
    try:
        parse_header(memoryview(data))
        ours = True
    except torchweb.safetensors.SafetensorError:
        ours = False
    assert ours == theirs, f"the safetensors package {'accepts' if theirs else 'refuses'} it, torchweb does not"


@FUZZ
@given(H.safetensors_file())
def test_safetensors_headers(data):
    out = loads_or_refuses("safetensors_header", load_st, data)
    same_verdict_as_package(data)
    if out is not None:   # what loads is what the header says
        _, entries, _ = parse_header(memoryview(data))
        assert {e[0]: list(e[2]) for e in entries} == {k: list(v.shape) for k, v in out.items()}
        check_loaded_tensors(out)


@FUZZ
@given(H.mutated_safetensors())
def test_mutated_safetensors(data):
    check_loaded_tensors(loads_or_refuses("safetensors_mutated", load_st, data))
    same_verdict_as_package(data)


# -- memory claims ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name,kind,data", H.claims(), ids=[c[0] for c in H.claims()])
def test_claims_allocate_nothing(name, kind, data):
    fn = load_pt if kind == "pt" else load_st
    load_pt(H.SEEDS[0])   # imports and first-use caches outside the measurement
    load_st(H.ST_SEED)
    tracemalloc.start()
    try:
        out = loads_or_refuses("claims", fn, data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_LIMIT, f"{name}: a {len(data)}-byte file took {peak} bytes"
    if out is not None:   # only the stride-0 view loads: 2^60 elements over one stored element
        assert name.startswith("pickle_numel_1_"), name


@settings(max_examples=max(EXAMPLES // 5, 40), derandomize=not LONG, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(st.integers(2 ** 28, 2 ** 62), st.integers(0, 3))
def test_claimed_sizes_allocate_nothing(n, where):
    """A drawn huge size in a storage's numel, a tensor's size, a header length or a shape."""
    if where == 0:
        data, fn = H.with_pickle(H._storage_pickle(n, [n]), extra={"archive/data/0": b"\0" * 16}), load_pt
    elif where == 1:
        data, fn = H.with_pickle(H._storage_pickle(4, [2, n], [n, 1]), extra={"archive/data/0": b"\0" * 16}), load_pt
    elif where == 2:
        data, fn = n.to_bytes(8, "little") + b'{"w": {}}', load_st
    else:
        text = ('{"w": {"dtype": "F32", "shape": [%d, 4], "data_offsets": [0, %d]}}' % (n, 16 * n)).encode()
        data, fn = len(text).to_bytes(8, "little") + text + b"\0" * 16, load_st
    tracemalloc.start()
    try:
        with pytest.raises(H.LOADER_ERRORS):
            fn(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_LIMIT, (n, where, peak)


# -- hub.load_state_dict_from_url -------------------------------------------------------------------
HUB_ERRORS = H.LOADER_ERRORS + (OSError, ValueError)   # + what the file system says of a name


@pytest.fixture
def fake_fetch(monkeypatch):
    """The download layer replaced (no network): the bytes to serve, and the URLs asked for."""
    state = {"data": b"", "urls": []}

    def fetch(url, progress=True):
        state["urls"].append(url)
        return state["data"]
    monkeypatch.setattr(torchweb.hub, "fetch_bytes", fetch)
    return state


URL_PARTS = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12)


@settings(max_examples=max(EXAMPLES // 2, 60), derandomize=not LONG, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(url=st.one_of(st.builds(lambda a, b, ext: f"https://{a}/{b}{ext}", URL_PARTS, URL_PARTS,
                               st.sampled_from([".pt", ".pth", ".safetensors", "", ".", "/..", "/"])),
                     URL_PARTS),
       file_name=st.one_of(st.none(), st.sampled_from(["m.pt", "w-deadbeef.pt", "x.safetensors"])),
       check_hash=st.booleans(),
       payload=st.one_of(st.sampled_from(H.SEEDS + [H.ST_SEED, b""]), H.mutated_checkpoint(),
                         H.safetensors_file()))
def test_hub_inputs(tmp_path_factory, fake_fetch, url, file_name, check_hash, payload):
    root = tmp_path_factory.mktemp("hub")
    model_dir = root / "checkpoints"
    fake_fetch["data"] = payload
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torchweb.hub.load_state_dict_from_url(url, model_dir=str(model_dir), map_location="cpu",
                                                  progress=False, check_hash=check_hash, file_name=file_name)
        count("hub", "loaded")
    except HUB_ERRORS as e:
        count("hub", type(e).__name__)
    assert not H.GADGET_RAN
    # a name taken from the URL never writes outside model_dir (which a URL urlparse refuses
    # never creates)
    assert {p.name for p in root.iterdir()} <= {"checkpoints"}


def test_hub_hash_checked_before_loading(fake_fetch, tmp_path):
    """check_hash refuses a file whose sha256 does not start with the name's digits, before its
    pickle is read (a gadget in it never reaches the unpickler)."""
    fake_fetch["data"] = H.with_pickle(H.gadget_pickles(tmp_path / "ran")[0][1])
    with pytest.raises(RuntimeError, match="invalid hash value"):
        torchweb.hub.load_state_dict_from_url("https://example.invalid/m-0123abcd.pt", model_dir=str(tmp_path),
                                              check_hash=True, progress=False)
    assert fake_fetch["urls"] == ["https://example.invalid/m-0123abcd.pt"]
