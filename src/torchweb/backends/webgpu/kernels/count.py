"""Counting kernels: the compaction and permutation scatter behind unique, and bincount.

`scatter`: out[index[i] + bias] = src[i] (or i itself when src is None), for the i whose mask
is set (every i without a mask), one thread per i. With index the inclusive running count of a
flag array (a cumsum), bias -1 and the flags as mask, it compacts the flagged elements in order
(unique's values and the first position of each run); with index a permutation and no mask it
writes the inverse permutation's values (unique's inverse). The indices are the ops' own, never
the user's: no range check.

`bincount`: out[input[i]] += 1 (or weights[i]), one thread per element; input is known to lie
in [0, len(out)) (checked on the host from its min and max, which sizes out anyway).
Integer counts use atomicAdd on the i32 words. Float weights have no atomic add in WGSL: a
compare-exchange loop on the word's bits (array<atomic<u32>>) adds in f32, as the scatter and
embedding backward kernels do. Why not sort the input and sum segments: that costs a full sort
(several passes, most of them over the whole input) to avoid contention that only equal bins
have, and segment sums from a running sum would cancel badly in float32. The CAS loop is one
O(n) pass; the adds of one bin land in no fixed order, so float sums may differ from PyTorch's
sequential loop in the last bits (rounding only).
"""

import struct

from .bindings import bind, kinds
from .elementwise import WORKGROUP, param
from .. import errors as ERR
from .wgsl import cas_add_f32, cas_key, load


_HEAD = ("@compute @workgroup_size({wg})\n"
         "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
         "        @builtin(local_invocation_index) lid: u32) {{\n"
         "  let i = (wid.y * nwg.x + wid.x) * {wg}u + lid;\n").format(wg=WORKGROUP)


def _decl(nparams, storages):
    lines = ["enable f16;"] if "f16" in storages else []
    lines.append(f"@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {-(-nparams // 4)}>;")
    for s, st in enumerate(storages):
        access = "read_write" if s == 0 else "read"
        lines.append(f"@group(0) @binding({s + 1}) var<storage, {access}> B{s}: array<{st}>;")
    return "\n".join(lines) + "\n"


def scatter(rt, out, index, src=None, mask=None, bias=0):
    """out[index[i] + bias] = src[i] (or i) where mask[i] (or always); 1-D contiguous operands
    (any offset), n = len(index); src has out's dtype, index is int32/int64."""
    n = index.numel()
    if n == 0:
        return
    operands = [index] + ([src] if src is not None else []) + ([mask] if mask is not None else [])
    buffers, slots = bind(out, *operands)
    storages = [out.dtype.gpu_storage] + [None] * (len(buffers) - 1)
    storages[slots[0]] = "i32"
    if src is not None:
        storages[slots[1]] = src.dtype.gpu_storage
    if mask is not None:
        storages[slots[-1]] = mask.dtype.gpu_storage
    params = [n, out._offset, index._offset, src._offset if src is not None else 0,
              mask._offset if mask is not None else 0, bias & 0xFFFFFFFF]
    key = ("count_scatter", tuple(storages), tuple(slots), src is not None, mask is not None)
    nparams = len(params)

    def make_code():
        body = [f"  if (i >= {param(0)}) {{ return; }}"]
        if mask is not None:
            m = load(f"B{slots[-1]}[{param(4)} + i]", mask.dtype.gpu_storage, "bool")
            body.append(f"  if (!{m}) {{ return; }}")
        body.append(f"  let k = u32(B{slots[0]}[{param(2)} + i] + bitcast<i32>({param(5)}));")
        val = f"B{slots[1]}[{param(3)} + i]" if src is not None else "i32(i)"
        body.append(f"  B0[{param(1)} + k] = {val};")
        return _decl(nparams, storages) + _HEAD + "\n".join(body) + "\n}\n"

    pid = rt.pipeline(key, make_code, kinds(buffers))
    rt.dispatch(pid, rt.grid(-(-n // WORKGROUP)), buffers, struct.pack(f"<{nparams}I", *params))


def gather(rt, out, index, src):
    """out[i] = src[index[i]]; 1-D contiguous operands (any offset), index int32/int64, in range."""
    n = index.numel()
    if n == 0:
        return
    buffers, slots = bind(out, index, src)
    storages = [out.dtype.gpu_storage] + [None] * (len(buffers) - 1)
    storages[slots[0]] = "i32"
    storages[slots[1]] = src.dtype.gpu_storage
    params = [n, out._offset, index._offset, src._offset]
    key = ("count_gather", tuple(storages), tuple(slots))

    def make_code():
        body = [f"  if (i >= {param(0)}) {{ return; }}",
                f"  B0[{param(1)} + i] = B{slots[1]}[{param(3)} + u32(B{slots[0]}[{param(2)} + i])];"]
        return _decl(4, storages) + _HEAD + "\n".join(body) + "\n}\n"

    pid = rt.pipeline(key, make_code, kinds(buffers))
    rt.dispatch(pid, rt.grid(-(-n // WORKGROUP)), buffers, struct.pack("<4I", *params))


def bincount(rt, out, inp, weights=None):
    """out (contiguous, zeroed; int64 counts or float32 sums) += 1 or weights[i] at inp[i];
    inp, weights 1-D contiguous (any offset)."""
    n = inp.numel()
    if n == 0:
        return
    operands = [inp] + ([weights] if weights is not None else [])
    buffers, slots = bind(out, *operands)
    storages = ["atomic<i32>" if weights is None else "atomic<u32>"] + [None] * (len(buffers) - 1)
    storages[slots[0]] = inp.dtype.gpu_storage
    if weights is not None:
        storages[slots[1]] = weights.dtype.gpu_storage
    params = [n, out._offset, inp._offset, weights._offset if weights is not None else 0]
    key = ("bincount", tuple(storages), tuple(slots))
    bkinds = kinds(buffers)
    if weights is not None:   # the compare-exchange add may run out of retries (errors.CONTENTION)
        params.append(rt.errors.tag("bincount", hint=(
            "A deterministic alternative without atomics: the one-hot sum "
            "(torch.nn.functional.one_hot(input, bins).to(weights.dtype) * weights[:, None]).sum(0); "
            "or run it on the cpu device.")))
        key += cas_key()
        buffers = buffers + [rt.errors.binding]
        bkinds = bkinds + ["write"]
    nparams = len(params)

    def make_code():
        body = [f"  if (i >= {param(0)}) {{ return; }}",
                f"  let k = {param(1)} + u32({load(f'B{slots[0]}[{param(2)} + i]', inp.dtype.gpu_storage, 'i32')});"]
        decl = _decl(nparams, storages)
        if weights is None:
            body.append("  atomicAdd(&B0[k], 1i);")
        else:
            w = load(f"B{slots[1]}[{param(3)} + i]", weights.dtype.gpu_storage, "f32")
            body += [f"  let w = {w};"] + cas_add_f32("B0[k]", "w", param(4))
            decl += f"@group(0) @binding({len(storages) + 1}) {ERR.WGSL_DECL}\n"
        return decl + _HEAD + "\n".join(body) + "\n}\n"

    pid = rt.pipeline(key, make_code, bkinds)
    rt.dispatch(pid, rt.grid(-(-n // WORKGROUP)), buffers, struct.pack(f"<{nparams}I", *params))
