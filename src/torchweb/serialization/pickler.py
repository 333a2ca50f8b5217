"""The pickle that torch.save writes (protocol 2, archive/data.pkl), written opcode by opcode.

torchweb cannot hand its objects to Python's pickle module: PyTorch's file names PyTorch's
functions (torch._utils._rebuild_tensor_v2, torch.FloatStorage, collections.OrderedDict), which
pickle would try to import. So this writer knows the objects a checkpoint holds and writes
them as torch.save does:

    tensor      torch._utils._rebuild_tensor_v2(<persistent id>, offset, size, stride,
                                                requires_grad, OrderedDict())
    sparse COO  torch._utils._rebuild_sparse_tensor(layout, (indices, values, size, coalesced))
                with persistent id ('storage', torch.FloatStorage, key, location, numel)
    Parameter   torch._utils._rebuild_parameter(<tensor>, requires_grad, OrderedDict())
    containers  dict, collections.OrderedDict (its __dict__, e.g. _metadata, through BUILD),
                list, tuple, set; str, bytes (as _codecs.encode, protocol 2's way), int, float,
                bool, None; torch.Size, dtypes (torch.float32), torch.device

Anything else is refused with a TypeError naming its type: every global written is one that
PyTorch's weights_only loader (and torchweb's) accepts.
"""

import struct
from collections import OrderedDict

from .. import _dtype as D
from .._device import device as _device
from .._size import Size
from .._tensor import Tensor
from ..nn.parameter import Parameter

_SUPPORTED = ("tensors, nn.Parameters, dicts, OrderedDicts, lists, tuples, sets, str, bytes, "
              "int, float, bool, None, torch.Size, dtypes and devices")


class Pickler:
    """describe(tensor) -> (storage class name, key, location, numel, tensor to write) is
    called for each tensor; the pickle refers to its storage by that persistent id."""

    def __init__(self, describe):
        self.describe = describe
        self.out = bytearray()
        self.memo = {}      # id(obj) or ("global", name) or ("str", s) -> memo index
        self.keep = []      # objects memoized by id stay alive while we write

    def dump(self, obj):
        self.out += b"\x80\x02"
        self.save(obj)
        self.out += b"."
        return bytes(self.out)

    # -- memo ------------------------------------------------------------------------------
    def _put(self, key):
        i = len(self.memo)
        self.memo[key] = i
        self.out += b"q" + bytes([i]) if i < 256 else b"r" + struct.pack("<I", i)

    def _get(self, key):
        i = self.memo.get(key)
        if i is None:
            return False
        self.out += b"h" + bytes([i]) if i < 256 else b"j" + struct.pack("<I", i)
        return True

    def _memo_obj(self, obj):
        self.keep.append(obj)
        self._put(id(obj))

    def global_(self, module, name):
        key = ("global", module, name)
        if not self._get(key):
            self.out += b"c" + module.encode() + b"\n" + name.encode() + b"\n"
            self._put(key)

    # -- values ----------------------------------------------------------------------------
    def save(self, obj):
        if obj is None:
            self.out += b"N"
        elif obj is True or obj is False:
            self.out += b"\x88" if obj else b"\x89"
        elif type(obj) is int:
            self.save_int(obj)
        elif type(obj) is float:
            self.out += b"G" + struct.pack(">d", obj)
        elif type(obj) is str:
            self.save_str(obj)
        elif id(obj) in self.memo and not isinstance(obj, (int, float)):
            self._get(id(obj))
        elif isinstance(obj, Tensor):
            self.save_tensor(obj)
        elif isinstance(obj, D.dtype):
            self.global_("torch", obj.name)
        elif isinstance(obj, _device):
            self.global_("torch", "device")
            self.save_tuple((str(obj) if obj.type == "cpu" else "cpu",))
            self.out += b"R"
            self._memo_obj(obj)
        elif isinstance(obj, Size):
            self.global_("torch", "Size")
            self.save_tuple((tuple(obj),))
            self.out += b"R"
            self._memo_obj(obj)
        elif type(obj) is OrderedDict:
            self.global_("collections", "OrderedDict")
            self.out += b")R"
            self._memo_obj(obj)
            self.save_items(obj)
            state = getattr(obj, "__dict__", None)
            if state:
                self.save(dict(state))
                self.out += b"b"
        elif type(obj) is dict:
            self.out += b"}"
            self._memo_obj(obj)
            self.save_items(obj)
        elif type(obj) is list:
            self.out += b"]"
            self._memo_obj(obj)
            for i in range(0, len(obj), 1000):
                chunk = obj[i:i + 1000]
                if len(chunk) == 1:
                    self.save(chunk[0])
                    self.out += b"a"
                else:
                    self.out += b"("
                    for v in chunk:
                        self.save(v)
                    self.out += b"e"
        elif type(obj) is tuple:
            self.save_tuple(obj)
        elif type(obj) in (set, frozenset):
            self.global_("builtins", type(obj).__name__)
            self.save_tuple((list(obj),))
            self.out += b"R"
            self._memo_obj(obj)
        elif type(obj) is bytes:
            self.global_("_codecs", "encode")
            self.save_tuple((obj.decode("latin1"), "latin1"))
            self.out += b"R"
            self._memo_obj(obj)
        else:
            raise TypeError(f"torchweb.save cannot write an object of type {type(obj).__module__}."
                            f"{type(obj).__qualname__}: it writes {_SUPPORTED}")

    def save_int(self, v):
        if 0 <= v < 256:
            self.out += b"K" + bytes([v])
        elif 0 <= v < 65536:
            self.out += b"M" + struct.pack("<H", v)
        elif -2**31 <= v < 2**31:
            self.out += b"J" + struct.pack("<i", v)
        else:
            n = (v.bit_length() >> 3) + 1
            data = v.to_bytes(n, "little", signed=True)
            if len(data) > 255:
                raise TypeError("torchweb.save: integer too large")
            self.out += b"\x8a" + bytes([len(data)]) + data

    def save_str(self, s):
        key = ("str", s)
        if self._get(key):
            return
        data = s.encode("utf-8", "surrogatepass")
        self.out += b"X" + struct.pack("<I", len(data)) + data
        self._put(key)

    def save_tuple(self, t):
        if not t:
            self.out += b")"
            return
        if len(t) <= 3:
            for v in t:
                self.save(v)
            self.out += b"\x85\x86\x87"[len(t) - 1:len(t)]
        else:
            self.out += b"("
            for v in t:
                self.save(v)
            self.out += b"t"
        self._memo_obj(t)

    def save_items(self, d):
        items = list(d.items())
        for i in range(0, len(items), 1000):
            chunk = items[i:i + 1000]
            if len(chunk) == 1:
                self.save(chunk[0][0])
                self.save(chunk[0][1])
                self.out += b"s"
            else:
                self.out += b"("
                for k, v in chunk:
                    self.save(k)
                    self.save(v)
                self.out += b"u"

    # -- tensors ---------------------------------------------------------------------------
    def save_tensor(self, t):
        if t.is_sparse:
            self.save_sparse(t)
        elif isinstance(t, Parameter):
            self.global_("torch._utils", "_rebuild_parameter")
            self.save_plain_tensor(t.detach())
            self.save(bool(t.requires_grad))
            self.global_("collections", "OrderedDict")
            self.out += b")R"
            self._put(("anon", len(self.memo)))
            self.out += b"\x87R"
        else:
            self.save_plain_tensor(t)
        self._memo_obj(t)

    def save_sparse(self, t):
        """torch._utils._rebuild_sparse_tensor(torch.sparse_coo, (indices, values, size,
        is_coalesced)), the layout through torch.serialization._get_layout, as torch.save."""
        self.global_("torch._utils", "_rebuild_sparse_tensor")
        self.global_("torch.serialization", "_get_layout")
        self.save_tuple(("torch.sparse_coo",))
        self.out += b"R"
        self._put(("anon", len(self.memo)))
        self.save_tuple((t._indices(), t._values().detach(), t.shape, t.is_coalesced()))
        self.out += b"\x86R"

    def save_plain_tensor(self, t):
        storage_name, key, location, numel, t = self.describe(t)
        self.global_("torch._utils", "_rebuild_tensor_v2")
        self.out += b"("
        self.out += b"("
        self.save_str("storage")
        self.global_("torch", storage_name)
        self.save_str(key)
        self.save_str(location)
        self.save_int(numel)
        self.out += b"t"
        self._put(("anon", len(self.memo)))
        self.out += b"Q"
        self.save_int(t.storage_offset())
        self.save_tuple(tuple(t.shape))
        self.save_tuple(tuple(t.stride()))
        self.save(bool(t.requires_grad))
        self.global_("collections", "OrderedDict")
        self.out += b")R"
        self._put(("anon", len(self.memo)))
        self.out += b"t"
        self._put(("anon", len(self.memo)))
        self.out += b"R"
