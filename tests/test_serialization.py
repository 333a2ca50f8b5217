"""Checkpoints: torchweb.save/load (PyTorch's zip format), torchweb.safetensors and
torchweb.hub.load_state_dict_from_url, checked against PyTorch and the safetensors package in
both directions on both devices; hostile pickles and malformed files refused."""

import collections
import functools
import http.server
import io
import os
import pickle
import struct
import threading
import warnings
import zipfile

import pytest
import torch

import torchweb
from torchweb.serialization.pickler import Pickler

safetensors_torch = pytest.importorskip("safetensors.torch")


# -- helpers ---------------------------------------------------------------------------------------
def torch_bytes(obj, **kw):
    buf = io.BytesIO()
    torch.save(obj, buf, **kw)
    return buf.getvalue()


def ours_bytes(obj):
    buf = io.BytesIO()
    torchweb.save(obj, buf)
    return buf.getvalue()


def assert_same_tensor(ours, theirs, device=None):
    """values, dtype, shape, stride, offset and type (Parameter or not) of ours vs torch's."""
    assert torchweb.is_tensor(ours), type(ours)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", ""), (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert tuple(ours.stride()) == tuple(theirs.stride())
    assert ours.storage_offset() == theirs.storage_offset()
    assert ours.tolist() == theirs.tolist()
    assert isinstance(ours, torchweb.nn.Parameter) == isinstance(theirs, torch.nn.Parameter)
    assert ours.requires_grad == theirs.requires_grad
    if device is not None:
        assert ours.device.type == device


def assert_same(ours, theirs, device=None):
    if isinstance(theirs, torch.Tensor):
        assert_same_tensor(ours, theirs, device)
    elif isinstance(theirs, dict):
        assert type(ours).__name__ == type(theirs).__name__
        assert list(ours) == list(theirs)
        for k in theirs:
            assert_same(ours[k], theirs[k], device)
    elif isinstance(theirs, torch.Size):
        assert isinstance(ours, torchweb.Size) and tuple(ours) == tuple(theirs)
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b, device)
    elif isinstance(theirs, torch.dtype):
        assert ours is getattr(torchweb, str(theirs).replace("torch.", ""))
    elif isinstance(theirs, torch.device):
        assert str(ours) == str(theirs)
    else:
        assert ours == theirs and type(ours) is type(theirs), (ours, theirs)


def same_storage(a, b):
    return a._storage is b._storage


def torch_same_storage(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def checkpoint_torch():
    """A state dict written by PyTorch: views sharing storage, every dtype torchweb holds."""
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6) / 7
    sd = collections.OrderedDict()
    sd["weight"] = base
    sd["view"] = base[1:, 2:5]               # offset + strides into weight's storage
    sd["transposed"] = base.t()               # same storage, other strides
    sd["expanded"] = torch.tensor([1.5, -2.0]).expand(3, 2)  # stride 0
    sd["param"] = torch.nn.Parameter(torch.tensor([[0.25, -1.0]]))
    sd["frozen"] = torch.nn.Parameter(torch.ones(2), requires_grad=False)
    sd["leaf"] = torch.tensor([3.0], requires_grad=True)
    sd["long"] = torch.tensor([-5, 7, 2**31 - 1])
    sd["int"] = torch.tensor([[1, -2]], dtype=torch.int32)
    sd["half"] = torch.tensor([0.5, 65504.0, -1e-3], dtype=torch.float16)
    sd["bool"] = torch.tensor([True, False, True])
    sd["byte"] = torch.tensor([0, 200, 255], dtype=torch.uint8)
    sd["scalar"] = torch.tensor(2.5)
    sd["empty"] = torch.zeros(0, 3)
    sd["special"] = torch.tensor([float("inf"), float("-inf"), -0.0])
    return sd


def nested_torch():
    w = torch.randn(3, 4)
    return {"model": checkpoint_torch(), "optimizer": {"state": {0: {"step": torch.tensor(3.0),
                                                                       "exp_avg": w}},
                                                        "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999),
                                                                          "params": [0]}]},
            "list": [w, w[0], (1, 2.5, "x", None, True)], "iter_num": 1200, "best": 2.5e-3,
            "big": 2**70, "neg": -3, "size": torch.Size([2, 3]), "dtype": torch.float16,
            "device": torch.device("cpu"), "set": {1, 2}, "bytes": b"\x00\xffab", "text": "héllo"}


# -- PyTorch -> torchweb ----------------------------------------------------------------------------
def test_load_torch_state_dict(device):
    sd = checkpoint_torch()
    out = torchweb.load(torch_bytes(sd), map_location=device)
    assert type(out) is collections.OrderedDict
    assert_same(out, sd, device)
    assert same_storage(out["weight"], out["view"]) and same_storage(out["weight"], out["transposed"])
    assert not same_storage(out["weight"], out["long"])
    # the storage is shared: writing through one tensor shows in the other
    out["weight"].mul_(0)
    assert out["view"].tolist() == [[0.0] * 3] * 3


def test_load_torch_nested(device):
    obj = nested_torch()
    out = torchweb.load(torch_bytes(obj), map_location=device)
    assert_same(out, obj, device)
    assert same_storage(out["list"][0], out["list"][1])
    assert out["list"][0] is out["optimizer"]["state"][0]["exp_avg"]   # one object, once


@pytest.mark.parametrize("kind", ["path", "file", "bytes", "bytearray"])
def test_load_sources(tmp_path, kind):
    sd = {"w": torch.arange(4.0)}
    path = tmp_path / "model.pt"
    torch.save(sd, path)
    if kind == "path":
        src = str(path)
    elif kind == "file":
        src = open(path, "rb")
    elif kind == "bytes":
        src = path.read_bytes()
    else:
        src = bytearray(path.read_bytes())
    out = torchweb.load(src, map_location="cpu")
    assert out["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    if kind == "file":
        src.close()


def test_load_default_location():
    """PyTorch's "cpu" stays on cpu; mmap is accepted and ignored."""
    out = torchweb.load(torch_bytes({"w": torch.ones(2)}), mmap=True)
    assert out["w"].device.type == "cpu"


@pytest.mark.parametrize("dtype,want", [(torch.float64, "float32"),
                                        (torch.int8, "int32"), (torch.int16, "int32")])
def test_load_converted_dtypes(device, dtype, want):
    t = torch.tensor([[1.5, -2.25], [3e3, 0.0]]).to(dtype)
    with pytest.warns(UserWarning, match=str(dtype).replace("torch.", "torch.")):
        out = torchweb.load(torch_bytes({"t": t, "v": t[1]}), map_location=device)
    assert out["t"].dtype.name == want
    assert out["t"].tolist() == t.to(torch.float32 if want == "float32" else torch.int32).tolist()
    assert same_storage(out["t"], out["v"])


def test_load_float64_overflow_becomes_inf(device):
    t = torch.tensor([1e300, -1e300, 1.0, float("nan")], dtype=torch.float64)
    with pytest.warns(UserWarning):
        out = torchweb.load(torch_bytes(t), map_location=device)
    want = t.float().tolist()
    got = out.tolist()
    assert got[:3] == want[:3] and got[3] != got[3]


def test_load_refuses_unsupported_dtype():
    with pytest.raises(RuntimeError, match="complex128"):
        torchweb.load(torch_bytes({"c": torch.ones(2, dtype=torch.complex128)}), map_location="cpu")


def test_int64_out_of_webgpu_range():
    data = torch_bytes({"t": torch.tensor([2**40])})
    assert torchweb.load(data, map_location="cpu")["t"].tolist() == [2**40]
    with pytest.raises(RuntimeError, match="out of range"):
        torchweb.load(data, map_location="webgpu")


# -- torchweb -> PyTorch ----------------------------------------------------------------------------
def checkpoint_ours(device):
    base = (torchweb.arange(24, dtype=torchweb.float32, device=device).reshape(4, 6) / 7)
    sd = collections.OrderedDict()
    sd["weight"] = base
    sd["view"] = base[1:, 2:5]
    sd["transposed"] = base.t()
    sd["expanded"] = torchweb.tensor([1.5, -2.0], device=device).expand(3, 2)
    sd["param"] = torchweb.nn.Parameter(torchweb.tensor([[0.25, -1.0]], device=device))
    sd["frozen"] = torchweb.nn.Parameter(torchweb.ones(2, device=device), requires_grad=False)
    sd["long"] = torchweb.tensor([-5, 7, 2**31 - 1], device=device)
    sd["int"] = torchweb.tensor([[1, -2]], dtype=torchweb.int32, device=device)
    sd["half"] = torchweb.tensor([0.5, 65504.0, -1e-3], dtype=torchweb.float16, device=device)
    sd["bool"] = torchweb.tensor([True, False, True], device=device)
    sd["byte"] = torchweb.tensor([0, 200, 255], dtype=torchweb.uint8, device=device)
    sd["scalar"] = torchweb.tensor(2.5, device=device)
    sd["empty"] = torchweb.zeros(0, 3, device=device)
    sd["special"] = torchweb.tensor([float("inf"), float("-inf"), -0.0], device=device)
    return sd


def test_save_loads_in_torch(device):
    sd = checkpoint_ours(device)
    back = torch.load(io.BytesIO(ours_bytes(sd)), weights_only=True)
    assert type(back) is collections.OrderedDict
    assert_same(sd, back)   # ours vs theirs, key by key
    assert torch_same_storage(back["weight"], back["view"])
    assert torch_same_storage(back["weight"], back["transposed"])
    assert not torch_same_storage(back["weight"], back["long"])
    assert str(back["weight"].device) == "cpu"


def test_save_nested_loads_in_torch(device):
    w = torchweb.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    obj = {"model": {"w": w, "row": w[1]}, "opt": {"state": {0: {"step": 3}}, "groups": [{"lr": 1e-3,
                                                                                         "betas": (0.9, 0.99)}]},
           "list": [w, (1, 2.5, "x", None, True)], "iter": 1200, "big": 2**70, "neg": -70000,
           "size": torchweb.Size([2, 3]), "dtype": torchweb.int64, "device": torchweb.device("cpu"),
           "set": {3, 4}, "bytes": b"\x00\xff", "text": "héllo", "long_list": list(range(1500))}
    back = torch.load(io.BytesIO(ours_bytes(obj)), weights_only=True)
    assert back["model"]["w"].tolist() == w.tolist()
    assert torch_same_storage(back["model"]["w"], back["model"]["row"])
    assert back["list"][0] is back["model"]["w"]
    assert back["opt"] == obj["opt"] and back["list"][1] == obj["list"][1]
    for k in ("iter", "big", "neg", "set", "bytes", "text", "long_list"):
        assert back[k] == obj[k], k
    assert back["size"] == torch.Size([2, 3]) and back["dtype"] is torch.int64
    assert back["device"] == torch.device("cpu")


def test_save_roundtrip_ours(device, tmp_path):
    sd = checkpoint_ours(device)
    path = tmp_path / "ckpt.pth"
    torchweb.save(sd, path)
    assert zipfile.ZipFile(path).namelist()[0] == "ckpt/data.pkl"   # PyTorch's record name
    out = torchweb.load(path, map_location=device)
    for k in sd:
        assert out[k].tolist() == sd[k].tolist() and out[k].dtype is sd[k].dtype
        assert out[k].stride() == sd[k].stride() and out[k].device.type == device
    assert same_storage(out["weight"], out["view"])
    assert isinstance(out["param"], torchweb.nn.Parameter) and out["param"].requires_grad


def test_save_archive_layout():
    data = ours_bytes({"a": torchweb.ones(3, device="cpu"), "b": torchweb.zeros(2, dtype=torchweb.int64, device="cpu")})
    z = zipfile.ZipFile(io.BytesIO(data))
    names = z.namelist()
    assert names[:4] == ["archive/data.pkl", "archive/.format_version", "archive/.storage_alignment",
                         "archive/byteorder"]
    assert names[-2:] == ["archive/version", "archive/.data/serialization_id"]
    assert z.read("archive/byteorder") == b"little" and z.read("archive/version") == b"3\n"
    for info in z.infolist():
        assert info.compress_type == zipfile.ZIP_STORED
        start = info.header_offset + 30 + len(info.filename) + len(info.extra)
        assert start % 64 == 0, info.filename   # data aligned as PyTorch's writer aligns it
    assert z.read("archive/data/1") == struct.pack("<2q", 0, 0)


def test_save_refuses_other_objects():
    class Thing:
        pass
    with pytest.raises(TypeError, match="Thing"):
        torchweb.save({"x": Thing()}, io.BytesIO())
    with pytest.raises(RuntimeError, match="legacy"):
        torchweb.save({}, io.BytesIO(), _use_new_zipfile_serialization=False)


# -- map_location ---------------------------------------------------------------------------------
def _with_location(location):
    """A checkpoint whose storage records `location` (as a CUDA machine writes it)."""
    t = torchweb.tensor([1.0, 2.0], device="cpu")

    def describe(x):
        return "FloatStorage", "0", location, 2, x
    buf = io.BytesIO()
    from torchweb.serialization.zipfile_format import _AlignedZip
    z = _AlignedZip(buf)
    z.write("archive/data.pkl", Pickler(describe).dump({"t": t}))
    z.write("archive/byteorder", b"little")
    z.write("archive/data/0", struct.pack("<2f", 1.0, 2.0))
    z.write("archive/version", b"3\n")
    z.close()
    return buf.getvalue()


def test_map_location_forms():
    cuda = _with_location("cuda:0")
    assert torch.load(io.BytesIO(cuda), weights_only=True, map_location="cpu")["t"].tolist() == [1.0, 2.0]
    assert torchweb.load(cuda)["t"].device.type == "webgpu"        # cuda -> webgpu
    assert torchweb.load(cuda, map_location="cpu")["t"].device.type == "cpu"
    assert torchweb.load(cuda, map_location=torchweb.device("cpu"))["t"].device.type == "cpu"
    assert torchweb.load(cuda, map_location={"cuda:0": "cpu"})["t"].device.type == "cpu"
    assert torchweb.load(cuda, map_location=lambda s, loc: s)["t"].device.type == "cpu"
    assert torchweb.load(cuda, map_location=lambda s, loc: s.cuda())["t"].device.type == "webgpu"
    assert torchweb.load(cuda, map_location=lambda s, loc: None)["t"].device.type == "webgpu"
    cpu = torch_bytes({"t": torch.ones(1)})
    assert torchweb.load(cpu, map_location="cuda:0")["t"].device.type == "webgpu"
    assert torchweb.load(cpu, map_location="webgpu")["t"].device.type == "webgpu"
    assert torchweb.load(cpu, map_location={"cuda:0": "webgpu"})["t"].device.type == "cpu"
    with pytest.raises(TypeError, match="map_location"):
        torchweb.load(cpu, map_location=3.5)


# -- hostile pickles ------------------------------------------------------------------------------
class Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class EvalPayload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (eval, (f"open({str(self.marker)!r}, 'w').close()",))


class PopenPayload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import subprocess
        return (subprocess.Popen, (["touch", str(self.marker)],))


class InternalPayload:
    def __reduce__(self):
        from torchweb.serialization import zipfile_format
        return (zipfile_format.write_archive, ("x", "y", "z"))


def _zip_with_pickle(pkl):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/byteorder", b"little")
        z.writestr("archive/version", b"3\n")
    return buf.getvalue()


@pytest.mark.parametrize("make,name", [
    (Payload, "os.system" if os.name != "nt" else "nt.system"),
    (EvalPayload, "builtins.eval"),
    (PopenPayload, "subprocess.Popen"),
    (lambda m: InternalPayload(), "torchweb.serialization.zipfile_format.write_archive"),
    (lambda m: {"w": [1.0, 2.0], "x": Payload(m)}, None),     # a payload beside plain data
])
@pytest.mark.parametrize("protocol", [2, 4])
def test_hostile_pickles_refused(tmp_path, make, name, protocol):
    marker = tmp_path / "executed"
    obj = make(marker)
    if name is None:
        name = "system"
    pkl = pickle.dumps(obj, protocol=protocol)
    data = _zip_with_pickle(pkl)
    with pytest.raises(pickle.UnpicklingError) as ours:
        torchweb.load(data)
    with pytest.raises(pickle.UnpicklingError):
        torch.load(io.BytesIO(data), weights_only=True)   # PyTorch refuses it the same way
    msg = str(ours.value)
    assert "Weights only load failed" in msg and "Unsupported global: GLOBAL" in msg
    assert name.split(".")[-1] in msg
    with pytest.warns(UserWarning, match="weights_only=False"):
        with pytest.raises(pickle.UnpicklingError):
            torchweb.load(data, weights_only=False)
    assert not marker.exists(), "the payload ran"


def test_hostile_pickle_via_torch_save(tmp_path):
    """torch.save of a payload (weights_only=False's territory in PyTorch)."""
    marker = tmp_path / "executed"
    data = torch_bytes({"w": torch.ones(2), "evil": Payload(marker)})
    with pytest.raises(pickle.UnpicklingError, match="system"):
        torchweb.load(data)
    assert not marker.exists()


def test_hostile_opcodes_refused(tmp_path):
    marker = tmp_path / "executed"
    # REDUCE on a dtype global (not callable through the allow-list), BUILD on a list, INST
    bad = [b"\x80\x02ctorch\nfloat32\n)R.", b"\x80\x02]}b.",
           b"(S'touch " + str(marker).encode() + b"'\nios\nsystem\n.", b"\x80\x02\xff."]
    for pkl in bad:
        with pytest.raises(pickle.UnpicklingError):
            torchweb.load(_zip_with_pickle(pkl))
    # a persistent id that is not a storage
    with pytest.raises(pickle.UnpicklingError, match="storage"):
        torchweb.load(_zip_with_pickle(b"\x80\x02X\x04\x00\x00\x00evil\x85Q."))
    assert not marker.exists()


def test_raw_pickle_is_refused_as_legacy(tmp_path):
    marker = tmp_path / "executed"
    with pytest.raises(RuntimeError, match="legacy"):
        torchweb.load(pickle.dumps(Payload(marker), protocol=2))
    assert not marker.exists()


# -- malformed checkpoints ------------------------------------------------------------------------
def test_legacy_format_refused():
    data = torch_bytes({"w": torch.ones(2)}, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="legacy format.*torch.save"):
        torchweb.load(data)


@pytest.mark.parametrize("cut", [0.5, 0.9])
def test_truncated_zip(cut):
    data = torch_bytes({"w": torch.arange(100.0)})
    with pytest.raises(RuntimeError, match="corrupt|truncated"):
        torchweb.load(data[:int(len(data) * cut)])


def test_corrupt_storage_crc():
    data = bytearray(torch_bytes({"w": torch.arange(100.0)}))
    i = data.find(struct.pack("<f", 50.0))
    data[i] ^= 0xFF
    with pytest.raises(RuntimeError, match="corrupt"):
        torchweb.load(bytes(data))


def _rewrite(data, drop=(), replace=None):
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n in src.namelist():
            if any(n.endswith(d) for d in drop):
                continue
            z.writestr(n, (replace or {}).get(n.split("/", 1)[1], src.read(n)))
    return buf.getvalue()


def test_missing_and_short_storages():
    data = torch_bytes({"w": torch.arange(10.0)})
    with pytest.raises(RuntimeError, match="missing"):
        torchweb.load(_rewrite(data, drop=["data/0"]))
    with pytest.raises(RuntimeError, match="should hold 10 elements"):
        torchweb.load(_rewrite(data, replace={"data/0": b"\0" * 12}))
    with pytest.raises(RuntimeError, match="no <name>/data.pkl"):
        torchweb.load(_rewrite(data, drop=["data.pkl"]))


def test_view_outside_storage():
    t = torchweb.tensor([1.0, 2.0], device="cpu")

    def describe(x):   # claims a storage of 1 element under a 2-element tensor
        return "FloatStorage", "0", "cpu", 1, x
    buf = io.BytesIO()
    from torchweb.serialization.zipfile_format import _AlignedZip
    z = _AlignedZip(buf)
    z.write("archive/data.pkl", Pickler(describe).dump(t))
    z.write("archive/data/0", struct.pack("<2f", 1.0, 2.0))
    z.close()
    with pytest.raises(RuntimeError, match="outside its storage"):
        torchweb.load(buf.getvalue())


def test_not_a_checkpoint(tmp_path):
    with pytest.raises(RuntimeError, match="not a PyTorch checkpoint"):
        torchweb.load(b"hello world, not a checkpoint")
    with pytest.raises(RuntimeError, match="empty"):
        torchweb.load(b"")
    st = safetensors_torch.save({"a": torch.ones(2)})
    with pytest.raises(RuntimeError, match="safetensors"):
        torchweb.load(st)


# -- safetensors ----------------------------------------------------------------------------------
def st_tensors_torch():
    return {"b.weight": torch.randn(3, 4), "a.bias": torch.tensor([1.0, -2.0]),
            "ids": torch.tensor([[1, 2, 3]]), "mask": torch.tensor([True, False]),
            "half": torch.tensor([0.5, -3.0, 7.0], dtype=torch.float16),
            "int": torch.tensor([5, -6], dtype=torch.int32), "u8": torch.tensor([0, 255], dtype=torch.uint8),
            "scalar": torch.tensor(3.5), "empty": torch.zeros(0, 2)}


def _ours_of(d, device):
    return {k: torchweb.tensor(v.tolist(), dtype=getattr(torchweb, str(v.dtype)[6:]), device=device).reshape(v.shape)
            for k, v in d.items()}


@pytest.mark.parametrize("metadata", [None, {}, {"format": "pt"}, {"format": "pt", "zé": "ü"}])
def test_safetensors_bytes_match_package(device, metadata):
    d = st_tensors_torch()
    ours = torchweb.safetensors.save(_ours_of(d, device), metadata=metadata)
    theirs = safetensors_torch.save(d, metadata=metadata)
    if metadata and len(metadata) > 1:
        # the package keeps __metadata__ in a Rust HashMap: its key order changes run to run
        import json
        n = struct.unpack("<Q", ours[:8])[0]
        assert ours[:8] == theirs[:8] and ours[8 + n:] == theirs[8 + n:]
        assert json.loads(ours[8:8 + n]) == json.loads(theirs[8:8 + n])
    else:
        assert ours == theirs


def test_safetensors_roundtrip(device, tmp_path):
    d = st_tensors_torch()
    path = tmp_path / "m.safetensors"
    safetensors_torch.save_file(d, path, metadata={"k": "v"})
    out = torchweb.safetensors.load_file(path, device=device)
    assert sorted(out) == sorted(d)
    for k in d:
        assert_same_tensor(out[k], d[k], device)
    assert torchweb.safetensors.load_metadata(path) == {"k": "v"}
    path2 = tmp_path / "o.safetensors"
    torchweb.safetensors.save_file(out, path2, metadata={"k": "v"})
    back = safetensors_torch.load_file(path2)
    for k in d:
        assert torch.equal(back[k], d[k]) and back[k].dtype == d[k].dtype
    out2 = torchweb.safetensors.load(path2.read_bytes(), device=device)
    assert all(out2[k].tolist() == d[k].tolist() for k in d)


@pytest.mark.parametrize("dtype,want", [(torch.float64, "float32"),
                                        (torch.int8, "int32"), (torch.int16, "int32")])
def test_safetensors_converted(device, dtype, want):
    t = torch.tensor([1.5, -2.0, 300.0]).to(dtype)
    with pytest.warns(UserWarning, match=str(dtype)):
        out = torchweb.safetensors.load(safetensors_torch.save({"t": t}), device=device)
    assert out["t"].dtype.name == want
    assert out["t"].tolist() == t.to(getattr(torch, want)).tolist()


def test_safetensors_refused_dtypes():
    data = safetensors_torch.save({"t": torch.ones(2, dtype=torch.uint32)})
    with pytest.raises(RuntimeError, match="uint32"):
        torchweb.safetensors.load(data)


def _st_file(header, body=b"", n=None):
    text = header if isinstance(header, bytes) else __import__("json").dumps(header).encode()
    return struct.pack("<Q", len(text) if n is None else n) + text + body


@pytest.mark.parametrize("data,match", [
    (_st_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
               "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8), "offset"),   # overlap
    (_st_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4), "incomplete|offset"),
    (_st_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 12), "incomplete"),
    (_st_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8), "offset"),     # gap
    (_st_file(b'{"a": {"dtype": "F32", '), "JSON"),
    (_st_file(b"[1, 2]  "), "header start"),
    (_st_file({}, n=2**40), "too large"),
    (_st_file({}, n=1000), "invalid header length"),
    (_st_file({"a": {"dtype": "F33", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4), "unknown dtype"),
    (_st_file({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8), "needs 12 bytes"),
    (_st_file({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 8]}}, b"\0" * 8), "shape"),
    (_st_file({"a": {"dtype": "F32", "shape": [2]}}, b"\0" * 8), "data_offsets"),
    (_st_file({"__metadata__": {"a": 1}}), "__metadata__"),
    (b"\x01\x00", "too small"),
])
def test_safetensors_malformed(data, match):
    with pytest.raises(torchweb.safetensors.SafetensorError, match=match):
        torchweb.safetensors.load(data)
    with pytest.raises(Exception):
        safetensors_torch.load(data)   # the package refuses it too


def test_safetensors_save_refusals(device):
    a = torchweb.arange(6, dtype=torchweb.float32, device=device).reshape(2, 3)
    with pytest.raises(ValueError, match="non contiguous"):
        torchweb.safetensors.save({"t": a.t()})
    with pytest.raises(RuntimeError, match="share memory"):
        torchweb.safetensors.save({"a": a, "b": a[0]})
    with pytest.raises(ValueError, match="Expected a dict"):
        torchweb.safetensors.save([a])
    with pytest.raises(ValueError, match="expected torch.Tensor"):
        torchweb.safetensors.save({"a": 1})
    # disjoint pieces of one storage are fine (as in the package), each written alone
    data = torchweb.safetensors.save({"r0": a[0], "r1": a[1]})
    assert data == safetensors_torch.save({"r0": torch.tensor([0.0, 1, 2]), "r1": torch.tensor([3.0, 4, 5])})


# -- URLs -----------------------------------------------------------------------------------------
@pytest.fixture
def http_dir(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_load_state_dict_from_url(http_dir, tmp_path, device):
    root, base = http_dir
    sd = checkpoint_torch()
    torch.save(sd, root / "model.pt")
    calls = []
    out = torchweb.hub.load_state_dict_from_url(base + "/model.pt", model_dir=str(tmp_path / "cache"),
                                                map_location=device, progress=lambda d, t: calls.append((d, t)))
    assert_same(out, sd, device)
    assert calls and calls[-1][0] == calls[-1][1] == (root / "model.pt").stat().st_size
    assert (tmp_path / "cache" / "model.pt").exists()
    (root / "model.pt").unlink()   # cached: not downloaded again
    again = torchweb.hub.load_state_dict_from_url(base + "/model.pt", model_dir=str(tmp_path / "cache"),
                                                  map_location=device, progress=False)
    assert again["weight"].tolist() == sd["weight"].tolist()


def test_load_state_dict_from_url_safetensors_and_hash(http_dir, tmp_path):
    import hashlib
    root, base = http_dir
    d = {"w": torch.arange(6.0).reshape(2, 3)}
    data = safetensors_torch.save(d)
    digest = hashlib.sha256(data).hexdigest()[:8]
    (root / f"w-{digest}.safetensors").write_bytes(data)
    out = torchweb.hub.load_state_dict_from_url(f"{base}/w-{digest}.safetensors", model_dir=str(tmp_path / "c"),
                                                check_hash=True, progress=False)
    assert out["w"].tolist() == d["w"].tolist()
    (root / "w-deadbeef.safetensors").write_bytes(data)
    with pytest.raises(RuntimeError, match="invalid hash value"):
        torchweb.hub.load_state_dict_from_url(f"{base}/w-deadbeef.safetensors", model_dir=str(tmp_path / "c"),
                                              check_hash=True, progress=False)


def test_load_state_dict_from_url_async(http_dir):
    import asyncio
    root, base = http_dir
    torch.save({"w": torch.ones(3)}, root / "a.pt")
    out = asyncio.run(torchweb.hub.load_state_dict_from_url_async(base + "/a.pt", map_location="cpu",
                                                                  progress=False))
    assert out["w"].tolist() == [1.0, 1.0, 1.0]


# -- without numpy --------------------------------------------------------------------------------
def test_pure_python_paths(monkeypatch):
    """The conversions Pyodide runs (no numpy): file bytes <-> GPU storage format."""
    from torchweb.serialization import storage_bytes as SB
    monkeypatch.setattr(SB, "_np", lambda: None)
    sd = {"f": torch.tensor([1.5, -2.0]), "h": torch.tensor([0.5, 2.0], dtype=torch.float16),
          "l": torch.tensor([-3, 2**31 - 1]), "i": torch.tensor([7, -8], dtype=torch.int32),
          "b": torch.tensor([True, False]), "u": torch.tensor([0, 255], dtype=torch.uint8)}
    out = torchweb.load(torch_bytes(sd), map_location="webgpu")
    for k in sd:
        assert_same_tensor(out[k], sd[k], "webgpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        conv = torchweb.load(torch_bytes({"d": torch.tensor([1e300, 0.25], dtype=torch.float64),
                                          "bf": torch.tensor([1.5, -2.0], dtype=torch.bfloat16),
                                          "c": torch.tensor([-7, 8], dtype=torch.int8)}), map_location="webgpu")
    assert conv["d"].tolist() == [float("inf"), 0.25]
    assert conv["bf"].tolist() == [1.5, -2.0] and conv["c"].tolist() == [-7, 8]
    assert conv["bf"].dtype is torchweb.bfloat16   # (loaded as is: tests/test_bfloat16.py)
    back = torch.load(io.BytesIO(ours_bytes(out)), weights_only=True)
    for k in sd:
        assert torch.equal(back[k], sd[k])


# -- modules --------------------------------------------------------------------------------------
def test_module_state_dicts_both_ways(device):
    """A model's state_dict (with _metadata, BatchNorm's int64 counter) moves both ways."""
    def build(nn):
        return nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.ReLU(), nn.Linear(3, 2))
    theirs = build(torch.nn)
    theirs[1].running_mean.add_(0.5)
    theirs[1].num_batches_tracked.add_(7)
    ours = build(torchweb.nn).to(device)
    ours.load_state_dict(torchweb.load(torch_bytes(theirs.state_dict()), map_location=device))
    for k, v in theirs.state_dict().items():
        assert_same_tensor(ours.state_dict()[k], v, device)
    fresh = build(torch.nn)
    fresh.load_state_dict(torch.load(io.BytesIO(ours_bytes(ours.state_dict())), weights_only=True))
    for k, v in theirs.state_dict().items():
        assert torch.equal(fresh.state_dict()[k], v), k
    x = torch.randn(5, 4)
    fresh.eval(), theirs.eval()
    assert torch.allclose(fresh(x), theirs(x))


# -- the browser tier's fixtures (tests/browser/checkpoint_check.py loads them from a URL) ---------
FIXTURES = os.path.join(os.path.dirname(__file__), "browser", "fixtures")


def test_browser_fixtures_current(device):
    import json
    with open(os.path.join(FIXTURES, "checkpoint.json")) as f:
        want = json.load(f)
    theirs = torch.load(os.path.join(FIXTURES, "checkpoint.pt"), weights_only=True)["model"]
    ours = torchweb.load(os.path.join(FIXTURES, "checkpoint.pt"), map_location=device)["model"]
    st = torchweb.safetensors.load_file(os.path.join(FIXTURES, "checkpoint.safetensors"), device=device)
    for sd, spec in ((theirs, want["pt"]), (ours, want["pt"]), (st, want["safetensors"])):
        assert sorted(sd) == sorted(spec)
        for k, w in spec.items():
            assert str(sd[k].dtype).replace("torch.", "") == w["dtype"] and sd[k].tolist() == w["values"], k
            assert list(sd[k].stride()) == w["stride"] and sd[k].storage_offset() == w["offset"], k
    for a, b in want["shared"]:
        assert ours[a]._storage is ours[b]._storage


# float16 checkpoints on an adapter without 'shader-f16' load as float16 (held in f32 words):
# tests/test_float16_emulated.py, in an interpreter that starts without the feature.


def test_training_checkpoint_resumes_both_ways(device):
    """nanoGPT's checkpoint: model, AdamW state, model_args, iter_num; resumed in the other library
    and stepped once more in both, the weights agree."""
    def step(model, opt, x):
        opt.zero_grad()
        model(x).square().sum().backward()
        opt.step()
    m = torchweb.nn.Linear(3, 2).to(device)
    opt = torchweb.optim.AdamW(m.parameters(), lr=1e-2)
    step(m, opt, torchweb.ones(4, 3, device=device))
    ckpt = {"model": m.state_dict(), "optimizer": opt.state_dict(), "model_args": {"n_layer": 2},
            "iter_num": 1, "best_val_loss": torchweb.tensor(1.5, device=device)}
    back = torch.load(io.BytesIO(ours_bytes(ckpt)), weights_only=True)
    assert back["model_args"] == {"n_layer": 2} and back["iter_num"] == 1
    tm = torch.nn.Linear(3, 2)
    tm.load_state_dict(back["model"])
    topt = torch.optim.AdamW(tm.parameters(), lr=1e-2)
    topt.load_state_dict(back["optimizer"])
    step(tm, topt, torch.ones(4, 3))
    ours = torchweb.load(torch_bytes({"model": tm.state_dict(), "optimizer": topt.state_dict()}),
                         map_location=device)
    m.load_state_dict(ours["model"])
    opt.load_state_dict(ours["optimizer"])
    step(m, opt, torchweb.ones(4, 3, device=device))
    step(tm, topt, torch.ones(4, 3))
    for a, b in ((m.weight, tm.weight), (m.bias, tm.bias)):
        assert torch.allclose(torch.tensor(a.tolist()), b.detach(), rtol=1e-5, atol=1e-6)
