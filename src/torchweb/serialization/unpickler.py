"""A restricted unpickler: PyTorch's weights_only rule, in pure Python.

Python's pickle runs whatever callable a file names. This reader interprets the opcodes itself
(as torch/_weights_only_unpickler.py does) and resolves a GLOBAL only from the allow-list
below; any other name stops the load with pickle.UnpicklingError ("Weights only load failed
... Unsupported global: GLOBAL os.system ...") before anything is called. REDUCE and NEWOBJ
call only allow-listed callables, BUILD sets state only on OrderedDicts and tensors, and
APPEND/SETITEM only fill lists, sets and dicts. Nothing from the file is imported or executed.

The allow-list (PyTorch's names -> what torchweb builds):
    torch._utils._rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
    _rebuild_parameter_with_state, torch._tensor._rebuild_from_type_v2    -> tensors
    torch._utils._rebuild_sparse_tensor, torch.serialization._get_layout   -> sparse COO tensors
    torch.FloatStorage, torch.HalfStorage, ... (legacy storage classes)     -> storage types
    torch.float32, torch.int64, ... (dtypes written as globals)             -> torchweb dtypes
    torch.Size, torch.device, torch.Tensor, torch.nn.parameter.Parameter
    collections.OrderedDict, collections.Counter, builtins.set, builtins.bytearray,
    builtins.complex, _codecs.encode (protocol 2's bytes)
"""

import _compat_pickle
import codecs
import struct
from collections import Counter, OrderedDict
from pickle import UnpicklingError

from .. import _dtype as D
from .._size import Size
from .storage_bytes import BY_NAME, BY_STORAGE
from .. import _layout
from .._device import device
from .._sparse_coo import sparse_coo_tensor
from .._tensor import Tensor
from ..nn.parameter import Parameter


class StorageType:
    """What a legacy storage class (torch.FloatStorage) loads as: its element type."""

    __slots__ = ("fmt",)

    def __init__(self, fmt):
        self.fmt = fmt

    def __repr__(self):
        return f"torch.{self.fmt.storage}"


class _TensorClass:
    """torch.Tensor as a global (a tensor subclass record names it)."""

    def __repr__(self):
        return "torch.Tensor"


TENSOR_CLASS = _TensorClass()


# -- the rebuild functions (PyTorch's signatures) -------------------------------------------------
def _storage_tensor(storage, offset, size, stride, fmt=None):
    if not hasattr(storage, "make_tensor"):
        raise UnpicklingError(f"expected a storage to rebuild a tensor from, got {type(storage).__name__}")
    return storage.make_tensor(offset, tuple(size), tuple(stride), fmt)


def _grad(t, requires_grad):
    if type(requires_grad) is not bool:   # PyTorch sets tensor.requires_grad, which takes a bool only
        raise UnpicklingError(f"requires_grad must be a bool, got {type(requires_grad).__name__}")
    if requires_grad and t.dtype.is_floating_point:
        t.requires_grad_(True)
    return t


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _storage_tensor(storage, storage_offset, size, stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    return _grad(_bits(_storage_tensor(storage, storage_offset, size, stride), metadata), requires_grad)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    name = getattr(dtype, "name", None)
    if name not in BY_NAME:
        raise UnpicklingError(f"_rebuild_tensor_v3: unknown dtype {dtype!r}")
    t = _storage_tensor(storage, storage_offset, size, stride, BY_NAME[name])
    return _grad(_bits(t, metadata), requires_grad)


def _bits(t, metadata):
    """PyTorch saves a conjugate (or negative) view as its storage and {"conj": True} (or
    {"neg": True}): the view again (torchweb has no negative bit: the negation)."""
    if isinstance(metadata, dict):
        if metadata.get("neg"):
            t = -t
        if metadata.get("conj"):
            t = t.conj()
    return t


def _set_state(obj, state):
    """A tensor's Python attributes (PyTorch's _set_obj_state), minus dunder names."""
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
        state = dict(state or {}, **(slots or {}))
    if not state:
        return obj
    if not isinstance(state, dict):
        raise UnpicklingError(f"tensor state must be a dict, got {type(state).__name__}")
    for k, v in state.items():
        if not isinstance(k, str) or k.startswith("__"):
            raise UnpicklingError(f"refusing tensor attribute {k!r}")
        obj.__dict__[k] = v
    return obj


def _check_tensor(t, what):
    if not isinstance(t, Tensor):
        raise UnpicklingError(f"{what} expects a tensor, got {type(t).__name__}")


def _rebuild_parameter(data, requires_grad, backward_hooks):
    _check_tensor(data, "_rebuild_parameter")
    return Parameter(data, bool(requires_grad) and data.dtype.is_floating_point)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    if func not in _REBUILDERS:
        raise UnpicklingError(f"_rebuild_from_type_v2: {func!r} is not a tensor rebuild function")
    ret = func(*args)
    if new_type is Parameter and not isinstance(ret, Parameter):
        ret = Parameter(ret, ret.requires_grad)
    elif new_type is not TENSOR_CLASS and new_type is not Parameter:
        raise UnpicklingError(f"_rebuild_from_type_v2: unsupported tensor type {new_type!r}")
    return _set_state(ret, state)


def _encode(obj, encoding="utf-8", errors="strict"):
    """_codecs.encode as protocol 2 writes bytes: a str and a text encoding, nothing else."""
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1", "utf-8", "utf8", "ascii"):
        raise UnpicklingError("_codecs.encode: only str -> bytes with a text encoding is allowed")
    return codecs.encode(obj, encoding, errors)


def _torch_device(kind, index=None):
    try:
        return device(kind, index)
    except (RuntimeError, ValueError):
        return device("webgpu")   # cuda, mps, ...: torchweb's accelerator


def _get_layout(name):
    layout = _layout.LAYOUTS.get(name.replace("torch.", ""))
    if layout is None:
        raise UnpicklingError(f"_get_layout: unknown layout {name!r}")
    return layout


def _rebuild_sparse_tensor(layout, data):
    if layout is not _layout.sparse_coo:
        raise UnpicklingError(f"_rebuild_sparse_tensor: layout {layout} is not supported by torchweb "
                              "(only torch.sparse_coo)")
    indices, values, size = data[:3]
    coalesced = data[3] if len(data) > 3 else None
    _check_tensor(indices, "_rebuild_sparse_tensor")
    _check_tensor(values, "_rebuild_sparse_tensor")
    return sparse_coo_tensor(indices, values, size, is_coalesced=coalesced)


_REBUILDERS = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
               _rebuild_parameter_with_state)


def _allowed_globals():
    g = {
        "collections.OrderedDict": OrderedDict,
        "collections.Counter": Counter,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Size": Size,
        "torch.Tensor": TENSOR_CLASS,
        "torch.device": _torch_device,
        "_codecs.encode": _encode,
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch._utils._rebuild_sparse_tensor": _rebuild_sparse_tensor,
        "torch.serialization._get_layout": _get_layout,
    }
    for f in _REBUILDERS:
        g["torch._utils." + f.__name__] = f
    for name, fmt in BY_NAME.items():
        g["torch." + name] = D._BY_NAME.get(name) or D._UnsupportedDtype(name)
    for sname, fmt in BY_STORAGE.items():
        g["torch." + sname] = StorageType(fmt)
    return g


_ALLOWED = None
_CALLABLE = None    # what REDUCE may call
_NEWOBJ = (OrderedDict, Counter, set, bytearray, Size)


def allowed():
    global _ALLOWED, _CALLABLE
    if _ALLOWED is None:
        _ALLOWED = _allowed_globals()
        _CALLABLE = [v for v in _ALLOWED.values() if callable(v) and not isinstance(v, (StorageType, D.dtype))]
    return _ALLOWED


def refused(full_path, why="was not an allowed global by default"):
    return UnpicklingError(
        "Weights only load failed. torchweb.load never runs code from a file: it rebuilds only "
        "tensors, containers, numbers and the PyTorch names it allows (docs/checkpoints.md).\n"
        f"WeightsUnpickler error: Unsupported global: GLOBAL {full_path} {why}.")


class Unpickler:
    """load() -> the object; persistent_load(pid) -> a storage for ('storage', ...) ids."""

    def __init__(self, data, persistent_load):
        self.data = memoryview(data)
        self.pos = 0
        self.persistent_load = persistent_load
        self.memo = {}

    def read(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise UnpicklingError("pickle data was truncated")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return bytes(b)

    def readline(self):
        data = self.data
        end = self.pos
        while end < len(data) and data[end] != 10:
            end += 1
        if end >= len(data):
            raise UnpicklingError("pickle data was truncated")
        line = bytes(data[self.pos:end])
        self.pos = end + 1
        return line

    def pop_mark(self):
        if not self.metastack:
            raise UnpicklingError("could not find MARK")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def top(self):
        if not self.stack:
            raise UnpicklingError("unpickling stack underflow")
        return self.stack[-1]

    def pop(self):
        if not self.stack:
            raise UnpicklingError("unpickling stack underflow")
        return self.stack.pop()

    def _top_as(self, kind, doing):
        """The object on top of the stack, which must be exactly a `kind` for `doing`."""
        top = self.top()
        if type(top) is not kind:
            raise UnpicklingError(f"Can only {doing}, but got {type(top)}")
        return top

    def find_class(self, module, name):
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        obj = allowed().get(full)
        if obj is None:
            raise refused(full)
        return obj

    def load(self):
        """The object; a malformed stream raises UnpicklingError (a rebuild's RuntimeError, which
        names what is wrong with a storage, passes through)."""
        try:
            return self._load()
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError, struct.error,
                RecursionError) as e:   # (UnicodeDecodeError is a ValueError)
            raise UnpicklingError(f"malformed pickle: {type(e).__name__}: {e}"[:500]) from None

    def _load(self):
        self.stack, self.metastack = [], []
        read, push = self.read, None
        while True:
            push = self.stack.append
            op = read(1)[0]
            if op == 0x80:                                   # PROTO
                read(1)
            elif op == 0x95:                                 # FRAME
                read(8)
            elif op == 0x2E:                                 # STOP
                return self.pop()
            elif op == 0x63:                                 # GLOBAL
                module = self.readline().decode("utf-8", "replace")
                name = self.readline().decode("utf-8", "replace")
                push(self.find_class(module, name))
            elif op == 0x93:                                 # STACK_GLOBAL
                name, module = self.pop(), self.pop()
                if not isinstance(module, str) or not isinstance(name, str):
                    raise UnpicklingError("STACK_GLOBAL requires str")
                push(self.find_class(module, name))
            elif op == 0x52:                                 # REDUCE
                args = self.pop()
                func = self.top()
                if not any(func is c for c in _CALLABLE) or not isinstance(args, tuple):
                    raise UnpicklingError(f"Trying to call reduce for unrecognized function {func!r}")
                self.stack[-1] = func(*args)
            elif op == 0x81:                                 # NEWOBJ
                args = self.pop()
                cls = self.pop()
                if cls is Parameter:
                    push(Parameter(*args))
                elif any(cls is c for c in _NEWOBJ) and isinstance(args, tuple):
                    push(cls.__new__(cls, *args))
                else:
                    raise UnpicklingError("Can only create new object for nn.Parameter or "
                                          f"allow-listed containers but got {cls!r}")
            elif op == 0x62:                                 # BUILD
                state = self.pop()
                inst = self.top()
                if type(inst) is OrderedDict and isinstance(state, dict):
                    inst.__dict__.update({k: v for k, v in state.items()
                                          if isinstance(k, str) and not k.startswith("__")})
                elif isinstance(inst, Tensor):
                    if isinstance(state, dict):   # PyTorch's reader calls set_(*state) on a tensor: refused
                        raise UnpicklingError("BUILD on a tensor takes a tuple state, got a dict")
                    _set_state(inst, state)
                else:
                    raise UnpicklingError(f"Can only build Tensor, Parameter or OrderedDict, but got {type(inst)}")
            elif op == 0x61:                                 # APPEND
                item = self.pop()
                self._top_as(list, "append to lists").append(item)
            elif op == 0x65:                                 # APPENDS
                items = self.pop_mark()
                self._top_as(list, "extend lists").extend(items)
            elif op == 0x73:                                 # SETITEM
                v, k = self.pop(), self.pop()
                self._set_items([k, v])
            elif op == 0x75:                                 # SETITEMS
                self._set_items(self.pop_mark())
            elif op == 0x90:                                 # ADDITEMS
                items = self.pop_mark()
                self._top_as(set, "add items to sets").update(items)
            elif op == 0x91:                                 # FROZENSET
                push(frozenset(self.pop_mark()))
            elif op == 0x28:                                 # MARK
                self.metastack.append(self.stack)
                self.stack = []
            elif op == 0x74:                                 # TUPLE
                push_items = tuple(self.pop_mark())
                self.stack.append(push_items)
            elif op == 0x85:                                 # TUPLE1
                self.stack[-1:] = [(self.top(),)]
            elif op == 0x86:                                 # TUPLE2
                self._tuple(2)
            elif op == 0x87:                                 # TUPLE3
                self._tuple(3)
            elif op == 0x30:                                 # POP
                if self.stack:
                    self.stack.pop()
                else:
                    self.pop_mark()
            elif op == 0x31:                                 # POP_MARK
                self.pop_mark()
            elif op == 0x32:                                 # DUP
                push(self.top())
            elif op == 0x4E:                                 # NONE
                push(None)
            elif op == 0x89:                                 # NEWFALSE
                push(False)
            elif op == 0x88:                                 # NEWTRUE
                push(True)
            elif op == 0x29:                                 # EMPTY_TUPLE
                push(())
            elif op == 0x5D:                                 # EMPTY_LIST
                push([])
            elif op == 0x7D:                                 # EMPTY_DICT
                push({})
            elif op == 0x8F:                                 # EMPTY_SET
                push(set())
            elif op == 0x4A:                                 # BININT
                push(struct.unpack("<i", read(4))[0])
            elif op == 0x4B:                                 # BININT1
                push(read(1)[0])
            elif op == 0x4D:                                 # BININT2
                push(struct.unpack("<H", read(2))[0])
            elif op == 0x8A:                                 # LONG1
                n = read(1)[0]
                push(int.from_bytes(read(n), "little", signed=True))
            elif op == 0x8B:                                 # LONG4
                n = struct.unpack("<i", read(4))[0]
                push(int.from_bytes(read(n), "little", signed=True))
            elif op == 0x47:                                 # BINFLOAT
                push(struct.unpack(">d", read(8))[0])
            elif op == 0x58:                                 # BINUNICODE
                n = struct.unpack("<I", read(4))[0]
                push(str(read(n), "utf-8", "surrogatepass"))
            elif op == 0x8C:                                 # SHORT_BINUNICODE
                n = read(1)[0]
                push(str(read(n), "utf-8", "surrogatepass"))
            elif op == 0x8D:                                 # BINUNICODE8
                n = struct.unpack("<Q", read(8))[0]
                push(str(read(n), "utf-8", "surrogatepass"))
            elif op == 0x55:                                 # SHORT_BINSTRING
                n = read(1)[0]
                push(read(n))
            elif op == 0x43:                                 # SHORT_BINBYTES
                n = read(1)[0]
                push(read(n))
            elif op == 0x42:                                 # BINBYTES
                n = struct.unpack("<I", read(4))[0]
                push(read(n))
            elif op == 0x51:                                 # BINPERSID
                pid = self.pop()
                if type(pid) is not tuple or not pid or _ascii(pid[0]) != "storage":
                    raise UnpicklingError("Only persistent_load of storage is allowed, "
                                          f"but got {pid!r:.200}")
                push(self.persistent_load(pid))
            elif op == 0x68:                                 # BINGET
                push(self._memo_get(read(1)[0]))
            elif op == 0x6A:                                 # LONG_BINGET
                push(self._memo_get(struct.unpack("<I", read(4))[0]))
            elif op == 0x71:                                 # BINPUT
                self.memo[read(1)[0]] = self.top()
            elif op == 0x72:                                 # LONG_BINPUT
                self.memo[struct.unpack("<I", read(4))[0]] = self.top()
            elif op == 0x94:                                 # MEMOIZE
                self.memo[len(self.memo)] = self.top()
            else:
                raise UnpicklingError(f"Unsupported operand {op} ({chr(op)!r}) at byte {self.pos - 1}")

    def _tuple(self, n):
        if len(self.stack) < n:
            raise UnpicklingError("unpickling stack underflow")
        self.stack[-n:] = [tuple(self.stack[-n:])]

    def _memo_get(self, i):
        try:
            return self.memo[i]
        except KeyError:
            raise UnpicklingError(f"Memo value not found at index {i}") from None

    def _set_items(self, items):
        target = self.top()
        if type(target) not in (dict, OrderedDict, Counter):
            raise UnpicklingError(f"Can only SETITEM on dicts, but got {type(target)}")
        if len(items) % 2:
            raise UnpicklingError("odd number of items for SETITEMS")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]


def _ascii(v):
    return v.decode("ascii", "replace") if isinstance(v, bytes) else v
