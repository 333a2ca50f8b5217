"""A fused elementwise update: one kernel that reads N same-sized buffers and writes some of
them in place (an optimizer step: param, grad and state in one pass).

The body is a list of assignments `(name, expression)` over the buffers' names, earlier
temporaries and the float scalars, in the small language that backends/cpu_optim.py also
evaluates with numpy: + - * /, parentheses, numbers, sqrt, abs, max, min. Everything is
computed in f32 (float16 buffers are read into f32 and rounded once when stored). The scalars
travel in the parameters uniform, so values that change every step (a learning rate, bias
corrections) never recompile the pipeline: a kernel is keyed by its body and buffer types.

Buffers are contiguous runs (an element offset each); every binding is read_write, and buffers
of one storage share a binding (WebGPU forbids binding a buffer twice when one is writable).
"""

import re
import struct

from .bindings import bind
from .elementwise import WORKGROUP, param
from .wgsl import load, scalar_bits, store

_NAME = re.compile(r"\b([A-Za-z_]\w*)\b")
FUNCTIONS = {"sqrt", "abs", "max", "min"}


def translate(expr, rename):
    """The WGSL form of an expression of the shared language."""
    def sub(m):
        word = m.group(1)
        if word in FUNCTIONS:
            return word
        return rename[word]
    return _NAME.sub(sub, expr)


def run(rt, key, tensors, names, writes, body, scalar_names, scalars, fresh=()):
    """tensors: contiguous, same numel, named `names`; writes: the names stored back;
    body: [(target, expression)]; scalars: float values named `scalar_names`; fresh: names
    whose buffers are new and read as zeros (no fill kernel before a first step)."""
    n = tensors[0].numel()
    if n == 0:
        return
    # every binding is written through: the output slot of bind() is just the first buffer
    buffers, slots = bind(tensors[0], *tensors[1:])
    slots = [0] + slots
    storage = [t.dtype.gpu_storage for t in tensors]
    nparams = 1 + len(tensors) + len(scalars)
    kkey = ("fused_update", key, tuple(names), tuple(writes), tuple(body), tuple(scalar_names),
            tuple(storage), tuple(slots), tuple(fresh))

    def make_code():
        slot_type = {}
        for s, st in zip(slots, storage):
            slot_type.setdefault(s, st)
        lines = ["enable f16;"] if "f16" in storage else []
        lines.append(f"@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {-(-nparams // 4)}>;")
        for s in range(len(buffers)):
            lines.append(f"@group(0) @binding({s + 1}) var<storage, read_write> B{s}: array<{slot_type[s]}>;")
        src = ["  let i = (wid.y * nwg.x + wid.x) * %du + lid;" % WORKGROUP,
               f"  if (i >= {param(0)}) {{ return; }}"]
        rename = {}
        for j, sname in enumerate(scalar_names):
            rename[sname] = f"s_{sname}"
            src.append(f"  let s_{sname} = bitcast<f32>({param(1 + len(tensors) + j)});")
        for k, (name, st) in enumerate(zip(names, storage)):
            rename[name] = f"v_{name}"
            value = "0.0" if name in fresh else load(f"B{slots[k]}[{param(1 + k)} + i]", st, "f32")
            src.append(f"  var v_{name}: f32 = {value};")
        for target, expr in body:
            code = translate(expr, rename)
            if target in rename:
                src.append(f"  {rename[target]} = {code};")
            else:
                rename[target] = f"v_{target}"
                src.append(f"  var v_{target} = {code};")
        for k, name in enumerate(names):
            if name in writes:
                val = store(f"v_{name}", "f32", tensors[k].dtype)   # (rounds float16 held in f32)
                src.append(f"  B{slots[k]}[{param(1 + k)} + i] = {val};")
        return ("\n".join(lines) + "\n"
                f"@compute @workgroup_size({WORKGROUP})\n"
                "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
                "        @builtin(local_invocation_index) lid: u32) {\n" + "\n".join(src) + "\n}\n")

    pid = rt.pipeline(kkey, make_code, ["uniform"] + ["write"] * len(buffers))
    words = [n] + [t._offset for t in tensors] + [scalar_bits(v, "f32") for v in scalars]
    rt.dispatch(pid, rt.grid(-(-n // WORKGROUP)), buffers, struct.pack(f"<{nparams}I", *words))
