"""Random fills from Philox4x32-10, counter-based: element i of call c under seed s draws
philox(counter=(i, c, 0, 0), key=(s_lo, s_hi)). The cpu device runs the same generator
(torchweb/_philox.py), so a seed gives the same numbers on both devices."""

import struct

from .elementwise import WORKGROUP, param
from .wgsl import store, scalar_bits

PHILOX = """
fn tw_mulhilo(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xffffu; let a1 = a >> 16u; let b0 = b & 0xffffu; let b1 = b >> 16u;
  let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0; let p11 = a1 * b1;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  let hi = p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
  return vec2<u32>(hi, a * b);
}
fn tw_philox(ctr: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
  var c = ctr; var k = key;
  for (var r = 0; r < 10; r = r + 1) {
    let p0 = tw_mulhilo(0xD2511F53u, c.x);
    let p1 = tw_mulhilo(0xCD9E8D57u, c.z);
    c = vec4<u32>(p1.x ^ c.y ^ k.x, p1.y, p0.x ^ c.w ^ k.y, p0.y);
    k = k + vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}
"""

_VALUE = {
    # u in [0, 1): 24 random bits
    "uniform": ("f32", "bitcast<f32>({a}) + (bitcast<f32>({b}) - bitcast<f32>({a})) * (f32(x.x >> 8u) * 5.9604644775390625e-08)"),
    "normal": ("f32", "bitcast<f32>({a}) + bitcast<f32>({b}) * sqrt(-2.0 * log(f32((x.x >> 8u) + 1u) * 5.9604644775390625e-08)) * cos(6.283185307179586 * f32(x.y >> 8u) * 5.9604644775390625e-08)"),
    "randint": ("i32", "bitcast<i32>({a}) + i32(x.x % bitcast<u32>({b}))"),
    "bernoulli": ("bool", "(f32(x.x >> 8u) * 5.9604644775390625e-08) < bitcast<f32>({a})"),
}


COUNTER_WORDS = 2   # the parameter words of (seed low, seed high, call): what a replay patches


def counter_words(seed, call):
    return [seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF, call & 0xFFFFFFFF]


def run(rt, kind, out, seed, call, a, b, base=0):
    """Fill contiguous out with random values. a, b: kind's parameters (see _VALUE). base: the
    counter of out's first element (a block of a tensor past the binding limit: windows.py)."""
    n = out.numel()
    if n == 0:
        return
    vtype, expr = _VALUE[kind]
    if kind == "uniform" and out.dtype.name == "float16":
        # 11 random bits, half's precision: 24 would round values near 1 up to 1.0 in half,
        # and rand() must stay in [0, 1)
        expr = expr.replace("f32(x.x >> 8u) * 5.9604644775390625e-08", "f32(x.x >> 21u) * 0.00048828125")
    pa = scalar_bits(a, "i32" if kind == "randint" else "f32")
    pb = scalar_bits(b, "i32" if kind == "randint" else "f32")
    params = [n, out._offset, *counter_words(seed, call), pa, pb, base]
    key = ("rand", kind, out.dtype.name)

    def make_code():
        value = expr.format(a=param(5), b=param(6))
        enable = "enable f16;\n" if out.dtype.gpu_storage == "f16" else ""
        return (enable + "@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 2>;\n"
                f"@group(0) @binding(1) var<storage, read_write> B0: array<{out.dtype.gpu_storage}>;\n"
                + PHILOX +
                f"@compute @workgroup_size({WORKGROUP})\n"
                "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
                "        @builtin(local_invocation_index) lid: u32) {\n"
                f"  let i = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;\n"
                f"  if (i >= {param(0)}) {{ return; }}\n"
                f"  let x = tw_philox(vec4<u32>(i + {param(7)}, {param(4)}, 0u, 0u), vec2<u32>({param(2)}, {param(3)}));\n"
                f"  B0[{param(1)} + i] = {store(value, vtype, out.dtype)};\n}}\n")

    pid = rt.pipeline(key, make_code, ["uniform", "write"])
    rt.dispatch(pid, rt.grid(-(-n // WORKGROUP)), [(out._storage.buffer_for_write(), out._storage.size)],
                struct.pack("<8I", *params))
