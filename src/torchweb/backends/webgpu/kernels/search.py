"""Binary search (searchsorted, bucketize): one thread per value.

Each thread walks its row of the sorted sequence with PyTorch's own loop, so that NaN and
unsorted data give PyTorch's answers too:

    left:  while lo < hi: mid = lo + (hi - lo) / 2; if !(seq[mid] >= v) lo = mid + 1 else hi = mid
    right: the same with !(seq[mid] > v)

A NaN value compares false with everything, so it lands past the end; NaN at the end of the
sequence (where sort() puts it) counts as larger than every number. The comparisons are made on
the bits' NaN test (tw_isnan): compilers may assume floats are never NaN. The loop runs at most
33 times (M < 2^32).

With a sorter (int64 [S, M], the permutation that sorts each row), seq[sorter[mid]] is read
instead; every thread i < S * M also checks sorter element i, so that any entry outside [0, M)
raises (RuntimeError at the next readback), as PyTorch checks them all.
"""

import struct

from .. import errors as ERR
from .bindings import bind, kinds
from .elementwise import WORKGROUP, param
from .wgsl import helpers_source, load

_HEAD = ("@compute @workgroup_size({wg})\n"
         "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
         "        @builtin(local_invocation_index) lid: u32) {{\n"
         "  let i = (wid.y * nwg.x + wid.x) * {wg}u + lid;\n").format(wg=WORKGROUP)


def run(rt, out, seq, values, sorter, right, t, shared):
    """out[r, k] = the insertion point of values[r, k] in seq's row (row 0 when shared, else r).
    out ([rows, K], int32/int64), seq ([S, M]), values ([rows, K]) and sorter ([S, M] int64 or
    None) are contiguous (any offset). t: the compute type (f32, i32, u32)."""
    rows, K = values.shape
    S, M = seq.shape
    n = rows * K
    checks = S * M if sorter is not None else 0
    threads = max(n, checks)
    if threads == 0:
        return
    operands = [seq, values] + ([sorter] if sorter is not None else [])
    buffers, slots = bind(out, *operands)
    storages = ["i32"] + [None] * (len(buffers) - 1)
    storages[slots[0]] = seq.dtype.gpu_storage
    storages[slots[1]] = values.dtype.gpu_storage
    if sorter is not None:
        storages[slots[2]] = "i32"
    params = [n, K, M, 0 if shared else 1, checks, out._offset, seq._offset, values._offset,
              sorter._offset if sorter is not None else 0]
    binding_kinds = kinds(buffers)
    if sorter is not None:   # only then can it fail: bind ERR (errors.py)
        params.append(rt.errors.tag("searchsorted", RuntimeError, "torch.searchsorted(): sorter index out of range"))
        buffers = buffers + [rt.errors.binding]
        binding_kinds = binding_kinds + ["write"]
    key = ("searchsorted", t, tuple(storages), tuple(slots), right, sorter is not None)
    nparams = len(params)

    def make_code():
        lines = ["enable f16;"] if "f16" in storages else []
        lines.append(f"@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {-(-nparams // 4)}>;")
        for s, st in enumerate(storages):
            access = "read_write" if s == 0 else "read"
            lines.append(f"@group(0) @binding({s + 1}) var<storage, {access}> B{s}: array<{st}>;")
        if sorter is not None:
            lines.append(f"@group(0) @binding({len(storages) + 1}) {ERR.WGSL_DECL}")
        lines.append(helpers_source({"isnan"}) if t == "f32" else "")
        seq_b, val_b = slots[0], slots[1]
        body = []
        if sorter is not None:
            body += [f"  if (i < {param(4)}) {{",
                     f"    let sv = B{slots[2]}[{param(8)} + i];",
                     f"    if (sv < 0i || u32(sv) >= {param(2)}) {{ {ERR.wgsl_raise(ERR.INDEX, param(9))} }}",
                     "  }"]
        body += [f"  if (i >= {param(0)}) {{ return; }}",
                 f"  let M = {param(2)};",
                 f"  let base = (i / {param(1)}) * {param(3)} * M;",
                 f"  let v = {load(f'B{val_b}[{param(7)} + i]', values.dtype.gpu_storage, t)};",
                 "  var lo = 0u; var hi = M;",
                 "  for (var it = 0u; it < 40u; it = it + 1u) {",
                 "    if (lo >= hi) { break; }",
                 "    let mid = lo + (hi - lo) / 2u;",
                 "    var j = mid;"]
        if sorter is not None:
            body += [f"    let sj = B{slots[2]}[{param(8)} + base + mid];",
                     "    if (sj < 0i || u32(sj) >= M) { break; }",
                     "    j = u32(sj);"]
        body.append(f"    let a = {load(f'B{seq_b}[{param(6)} + base + j]', seq.dtype.gpu_storage, t)};")
        op = ">" if right else ">="
        if t == "f32":
            body.append(f"    let go = tw_isnan(a) || tw_isnan(v) || !(a {op} v);")
        else:
            body.append(f"    let go = !(a {op} v);")
        body += ["    if (go) { lo = mid + 1u; } else { hi = mid; }",
                 "  }",
                 f"  B0[{param(5)} + i] = i32(lo);"]
        return "\n".join(lines) + "\n" + _HEAD + "\n".join(body) + "\n}\n"

    pid = rt.pipeline(key, make_code, binding_kinds)
    rt.dispatch(pid, rt.grid(-(-threads // WORKGROUP)), buffers, struct.pack(f"<{nparams}I", *params))
