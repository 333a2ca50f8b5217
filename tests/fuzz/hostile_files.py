"""Hostile checkpoint files for the loader fuzz (tests/test_loader_fuzz.py, bench/fuzz_loaders.py):
seeds written by PyTorch, hypothesis strategies that mutate them or build pickles and
safetensors headers from scratch, pickles that try to run code, and files that claim far more
memory than they hold.

What a loader may raise on any of them (docs/reliability.md, "Hostile files and bad input"):
LOADER_ERRORS. Anything else escaping is a bug; a gadget that runs sets GADGET_RAN or creates
a marker file.
"""

import io
import json
import os
import pickle
import struct
import zipfile

import torch
from hypothesis import strategies as st

# The documented exceptions: RuntimeError (malformed archive, storage, header; SafetensorError
# and torchweb.OutOfMemoryError are RuntimeErrors) and pickle.UnpicklingError (the restricted
# unpickler: a refused global, opcode or malformed stream).
LOADER_ERRORS = (RuntimeError, pickle.UnpicklingError)
GADGET_RAN = []


def fire(*args):
    """A gadget: if a loader ever calls it, the fuzz fails."""
    GADGET_RAN.append(args)


# -- seeds ------------------------------------------------------------------------------------------
def _torch_bytes(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def seed_checkpoints():
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 3
    sd = {"w": base, "view": base[1:, ::2], "t": base.t(), "p": torch.nn.Parameter(torch.ones(2)),
          "long": torch.tensor([-5, 7]), "half": torch.tensor([0.5, -2.0], dtype=torch.float16),
          "mask": torch.tensor([True, False]), "u8": torch.tensor([3, 250], dtype=torch.uint8),
          "scalar": torch.tensor(2.5), "meta": {"step": 3, "lr": 1e-3, "name": "x", "betas": (0.9, 0.99)}}
    return [_torch_bytes(sd), _torch_bytes([torch.zeros(0, 2), torch.tensor([1, 2], dtype=torch.int32)]),
            _torch_bytes(torch.nn.Linear(3, 2).state_dict())]


SEEDS = seed_checkpoints()


def st_seed(m=None):
    m = m or {}
    m["w"] = torch.arange(6.0).reshape(2, 3)
    m["i"] = torch.tensor([1, 2, 3], dtype=torch.int32)
    m["h"] = torch.tensor([0.5], dtype=torch.float16)
    text = json.dumps({"__metadata__": {"format": "pt"},
                       "w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
                       "i": {"dtype": "I32", "shape": [3], "data_offsets": [24, 36]},
                       "h": {"dtype": "F16", "shape": [1], "data_offsets": [36, 38]}}).encode()
    text += b" " * (-len(text) % 8)
    body = struct.pack("<6f", *range(6)) + struct.pack("<3i", 1, 2, 3) + struct.pack("<e", 0.5)
    return struct.pack("<Q", len(text)) + text + body


ST_SEED = st_seed()


def records(data):
    """{name: bytes} of a zip checkpoint."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {n: z.read(n) for n in z.namelist()}


def rezip(recs, compress=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compress) as z:
        for n, b in recs.items():
            z.writestr(n, b)
    return buf.getvalue()


def with_pickle(pkl, data=None, extra=None):
    """A zip checkpoint whose data.pkl is pkl (other records from data, a seed by default)."""
    recs = records(data or SEEDS[0])
    name = next(n for n in recs if n.endswith("/data.pkl"))
    recs[name] = pkl
    recs.update(extra or {})
    return rezip(recs)


# -- mutations --------------------------------------------------------------------------------------
@st.composite
def mutated(draw, data):
    """data with a few byte flips, overwrites, insertions, deletions, a duplicated chunk or a cut."""
    b = bytearray(data)
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["flip", "set", "insert", "delete", "dup", "cut", "int"]))
        if not b:
            break
        i = draw(st.integers(0, len(b) - 1))
        if kind == "flip":
            b[i] ^= 1 << draw(st.integers(0, 7))
        elif kind == "set":
            b[i] = draw(st.integers(0, 255))
        elif kind == "insert":
            b[i:i] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del b[i:i + draw(st.integers(1, 8))]
        elif kind == "dup":
            b[i:i] = b[i:i + draw(st.integers(1, 32))]
        elif kind == "cut":
            del b[i:]
        else:   # a length or size field replaced by a big or negative number
            v = draw(st.sampled_from([0, 1, 255, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 40, 2 ** 60, 2 ** 63 - 1]))
            w = draw(st.sampled_from([1, 2, 4, 8]))
            b[i:i + w] = (v % (1 << (8 * w))).to_bytes(w, "little")
    return bytes(b)


def mutated_checkpoint():
    """A PyTorch checkpoint mutated anywhere (zip layer included)."""
    return st.sampled_from(SEEDS).flatmap(mutated)


def mutated_pickle_checkpoint():
    """A PyTorch checkpoint whose data.pkl is mutated inside a valid zip (the unpickler's turn)."""
    def pick(data):
        recs = records(data)
        name = next(n for n in recs if n.endswith("/data.pkl"))
        return mutated(recs[name]).map(lambda pkl: with_pickle(pkl, data))
    return st.sampled_from(SEEDS).flatmap(pick)


# -- pickles built from opcodes ---------------------------------------------------------------------
GADGETS = [("fuzz.hostile_files", "fire"), ("os", "system"), ("posix", "system"), ("builtins", "eval"),
           ("builtins", "exec"), ("builtins", "getattr"), ("builtins", "__import__"), ("builtins", "open"),
           ("subprocess", "Popen"), ("subprocess", "check_output"), ("importlib", "import_module"),
           ("torch", "load"), ("torch.serialization", "load"), ("numpy.core.multiarray", "_reconstruct"),
           ("pickle", "loads"), ("runpy", "run_path"), ("code", "InteractiveInterpreter"),
           ("collections", "OrderedDict"), ("torch._utils", "_rebuild_tensor_v2"), ("torch", "FloatStorage"),
           ("torch._utils", "_rebuild_parameter"), ("torch._tensor", "_rebuild_from_type_v2"),
           ("_codecs", "encode"), ("builtins", "set"), ("torch", "Size"), ("torch", "device")]


def _global(module, name, stack):
    if stack:
        return (b"\x8c" + bytes([len(module)]) + module.encode() + b"\x8c" + bytes([len(name)]) + name.encode()
                + b"\x93")
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def _huge_length(n, k):
    """An opcode whose length field claims n bytes (or a memo index n)."""
    return [b"X" + struct.pack("<I", n % 2 ** 32), b"\x8d" + struct.pack("<Q", n), b"B" + struct.pack("<I", n % 2 ** 32),
            b"\x8b" + struct.pack("<i", n % 2 ** 31), b"\x8e" + struct.pack("<Q", n), b"j" + struct.pack("<I", n % 2 ** 32)][k]


@st.composite
def opcode_pickle(draw):
    """A protocol 2-4 pickle of opcodes drawn from the whole set: gadgets as GLOBAL and
    STACK_GLOBAL, REDUCE/BUILD/NEWOBJ/INST/OBJ on them, persistent ids, memo, containers, numbers
    with huge claimed lengths."""
    out = [b"\x80" + bytes([draw(st.integers(2, 5))])]
    string = st.text(max_size=6).map(lambda s: s.encode("utf-8"))
    pieces = st.one_of(
        st.sampled_from(GADGETS).flatmap(lambda g: st.booleans().map(lambda s: _global(*g, s))),
        st.sampled_from([b"(", b")", b"]", b"}", b"t", b"\x85", b"\x86", b"\x87", b"R", b"b", b"\x81", b"\x92",
                         b"a", b"e", b"s", b"u", b"0", b"1", b"2", b"N", b"\x88", b"\x89", b"\x94", b"Q",
                         b"\x8f", b"\x90", b"\x91", b"o", b"P", b"\x82\x01", b"\x95\x00\x00\x00\x00\x00\x00\x00\x00"]),
        string.map(lambda s: b"\x8c" + bytes([len(s)]) + s),
        string.map(lambda s: b"X" + struct.pack("<I", len(s)) + s),
        st.integers(-2 ** 31, 2 ** 31 - 1).map(lambda v: b"J" + struct.pack("<i", v)),
        st.integers(0, 255).map(lambda v: b"K" + bytes([v])),
        st.floats(allow_nan=True).map(lambda v: b"G" + struct.pack(">d", v)),
        st.integers(0, 255).map(lambda v: b"h" + bytes([v])),
        st.integers(0, 255).map(lambda v: b"q" + bytes([v])),
        st.tuples(st.sampled_from([2 ** 31 - 1, 2 ** 32 - 1, 2 ** 40, 2 ** 60]), st.integers(0, 5)).map(
            lambda t: _huge_length(*t)),
        st.just(b"(X\x07\x00\x00\x00storagecfuzz.hostile_files\nfire\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x01tQ"),
    )
    out += draw(st.lists(pieces, max_size=40))
    out.append(b".")
    return b"".join(out)


# -- pickles that try to run code -------------------------------------------------------------------
class _Reduce:
    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return (self.fn, self.args)


def gadget_pickles(marker):
    """(name, pickle bytes) of known gadget shapes; marker: a path a shell payload would create."""
    cmd = f"touch {marker}"
    shapes = {
        "os.system": _Reduce(os.system, (cmd,)),
        "eval": _Reduce(eval, (f"open({str(marker)!r}, 'w').close()",)),
        "exec": _Reduce(exec, (f"open({str(marker)!r}, 'w').close()",)),
        "fire": _Reduce(fire, ("reduce",)),
        "getattr_chain": _Reduce(getattr, (_Reduce(__import__, ("os",)), "system")),
        "nested_in_state_dict": {"w": [1.0, 2.0], "opt": {"state": _Reduce(fire, ("nested",))}},
        "in_tensor_state": _Reduce(fire, ("state",)),
        "ordered_dict_then_gadget": [__import__("collections").OrderedDict(a=1), _Reduce(fire, ("after",))],
    }
    out = [(k, pickle.dumps(v, protocol=p)) for k, v in shapes.items() for p in (2, 4)]
    # hand-written: INST and OBJ opcodes, BUILD with __setstate__ on an allowed class, a
    # persistent id pointing at a gadget, _rebuild_from_type_v2 with a gadget as its function
    out += [
        ("inst", b"(S'" + cmd.encode() + b"'\nios\nsystem\n."),
        ("obj", b"\x80\x02(cfuzz.hostile_files\nfire\nX\x03\x00\x00\x00objo."),
        ("build_setstate", b"\x80\x02ccollections\nOrderedDict\n)R}X\x0c\x00\x00\x00__setstate__"
                           b"cfuzz.hostile_files\nfire\nsb."),
        ("persid_gadget", b"\x80\x02(X\x07\x00\x00\x00storagecfuzz.hostile_files\nfire\nX\x01\x00\x00\x000"
                          b"X\x03\x00\x00\x00cpuK\x01tQ."),
        ("rebuild_from_type_gadget", b"\x80\x02ctorch._tensor\n_rebuild_from_type_v2\n"
                                     b"(cfuzz.hostile_files\nfire\nctorch\nTensor\n)}tR."),
        ("reduce_on_dtype", b"\x80\x02ctorch\nfloat32\n)R."),
        ("ext_registry", b"\x80\x02\x82\x01."),
        ("newobj_ex", b"\x80\x04cfuzz.hostile_files\nfire\n)}\x92."),
    ]
    return out


# -- safetensors ------------------------------------------------------------------------------------
ST_DTYPES = ["F32", "F16", "BF16", "F64", "I64", "I32", "I16", "I8", "U8", "BOOL", "U16", "U32", "U64", "C64",
             "F8_E4M3", "F4", "f32", "", "F33", None, 5]
BIG = [2 ** 31, 2 ** 32, 2 ** 40, 2 ** 60, 2 ** 63, 2 ** 64 + 1, -1, 1.5, "8", None]


@st.composite
def safetensors_file(draw):
    """A safetensors file with a drawn header (valid-looking or not) and a small body."""
    small = st.integers(0, 6)
    n_tensors = draw(st.integers(0, 4))
    header, offset = {}, 0
    for i in range(n_tensors):
        name = draw(st.one_of(st.text(max_size=8), st.sampled_from(["w", "__metadata__", "a.b", ""])))
        shape = draw(st.lists(st.one_of(small, st.sampled_from(BIG)), max_size=3))
        dt = draw(st.sampled_from(ST_DTYPES))
        size = draw(st.one_of(small.map(lambda v: v * 4), st.sampled_from(BIG)))
        begin = draw(st.one_of(st.just(offset), small, st.sampled_from(BIG)))
        entry = {"dtype": dt, "shape": shape, "data_offsets": [begin, begin + size if isinstance(begin, int)
                                                                and isinstance(size, int) else size]}
        if draw(st.integers(0, 9)) == 0:
            entry.pop(draw(st.sampled_from(sorted(entry))))
        header[name] = entry
        if isinstance(size, int) and 0 <= size < 64:
            offset += size
    if draw(st.booleans()):
        header["__metadata__"] = draw(st.one_of(st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
                                                st.just([1]), st.just({"a": 1})))
    text = json.dumps(header).encode()
    text += b" " * draw(st.integers(0, 8))
    claimed = draw(st.one_of(st.just(len(text)), st.sampled_from([0, 7, 2 ** 27, 2 ** 40, 2 ** 60, 2 ** 64 - 1]),
                             st.integers(0, len(text) + 16)))
    body = draw(st.one_of(st.binary(max_size=80), st.just(b"\0" * offset)))
    return struct.pack("<Q", claimed) + text + body


def mutated_safetensors():
    return mutated(ST_SEED)


# -- claims: a few bytes that say "allocate a lot" --------------------------------------------------
def _storage_pickle(numel, size, stride=None):
    """A pickle of one tensor over storage '0' claiming numel elements, size and stride."""
    stride = stride or [1] * len(size)
    tup = lambda xs: b"(" + b"".join(b"\x8a\x09" + int(v).to_bytes(9, "little", signed=True) for v in xs) + b"t"
    return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(("
            b"X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpu"
            + b"\x8a\x09" + int(numel).to_bytes(9, "little", signed=True) + b"tQK\x00"
            + tup(size) + tup(stride) + b"\x89ccollections\nOrderedDict\n)RtR.")


def _zip_claiming(size):
    """A seed whose data record's local and central headers claim `size` bytes (ZIP64)."""
    data = bytearray(SEEDS[1])
    # rewrite the central directory's size fields of every record
    i = 0
    while True:
        i = data.find(b"PK\x01\x02", i)
        if i < 0:
            break
        data[i + 20:i + 28] = struct.pack("<II", size, size)   # compressed and uncompressed sizes
        i += 4
    return bytes(data)


def claims():
    """(name, loader, bytes): files of a few hundred bytes claiming 2^40 elements or 2^60 bytes."""
    out = []
    for numel, size, stride in [(2 ** 40, [2 ** 40], None), (2 ** 60, [2 ** 30, 2 ** 30], None),
                                (1, [2 ** 20, 2 ** 20, 2 ** 20], [0, 0, 0]), (2 ** 40, [2 ** 20, 2 ** 20], None)]:
        out.append((f"pickle_numel_{numel}_size_{size}", "pt", with_pickle(_storage_pickle(numel, size, stride),
                                                                           extra={"archive/data/0": b"\0" * 16})))
    for op in (b"\x8d" + struct.pack("<Q", 2 ** 60), b"X" + struct.pack("<I", 2 ** 32 - 1),
               b"\x8b" + struct.pack("<i", 2 ** 31 - 1), b"B" + struct.pack("<I", 2 ** 32 - 1),
               b"\x8e" + struct.pack("<Q", 2 ** 60)):
        out.append((f"pickle_opcode_{op[:1].hex()}", "pt", with_pickle(b"\x80\x02" + op + b"abc.")))
    out += [(f"zip_records_claim_{n}", "pt", _zip_claiming(n)) for n in (2 ** 31, 2 ** 32 - 2)]
    for n in (2 ** 60, 2 ** 64 - 1, 10 ** 8):
        out.append((f"st_header_len_{n}", "st", struct.pack("<Q", n) + b'{"a":{}}'))
    for shape, offs in [([2 ** 20, 2 ** 20], [0, 2 ** 42]), ([2 ** 40], [0, 2 ** 42]), ([2 ** 62], [0, 4]),
                        ([2 ** 31, 2 ** 31, 2 ** 31], [0, 0])]:
        text = json.dumps({"w": {"dtype": "F32", "shape": shape, "data_offsets": offs}}).encode()
        out.append((f"st_shape_{shape}", "st", struct.pack("<Q", len(text)) + text + b"\0" * 8))
    return out
