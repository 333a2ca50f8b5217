"""Batched matmul of small matrices: one thread per output element, batches packed together.

The tiled kernel (matmul.py) spends a 256-thread workgroup and a 128x64 tile on every batch
entry; for many tiny matrices (a batch of 4x4 transforms, short attention heads) that is
99% idle lanes and one dispatch per 65535 batches. Here a workgroup covers as many batch
entries as fit in 256 outputs, and the grid folds like the elementwise kernels' does.
"""

import struct

from .. import errors as ERR
from .bindings import bind, declarations, kinds
from .elementwise import WORKGROUP, param
from .wgsl import helpers_source, load, store
from ..runtime import dispatch_head

MAX_SIDE = 16   # used when both M and N are at most this...
MAX_K = 4096    # ...and K too: a long K is better split over the tiled kernel's threads (and
                # lavapipe ends a shader invocation's loops after 65535 trips in all)


def fits(M, N, K):
    return M <= MAX_SIDE and N <= MAX_SIDE and K <= MAX_K


_PLANS = {}   # call signature -> (DISPATCH head, params): repeated shapes skip the planning


def run(rt, out, a, b, compute, epi=None):
    """Same contract as matmul.run: a [*batch, M, K], b [*batch, K, N] (any strides),
    out contiguous [*batch, M, N]. Any size works (the tiled kernel is faster past MAX_SIDE);
    int64 products accumulate 64 bits and refuse results past 32 (errors.py). epi: a float32
    product's epilogue, stored in its place (kernels/matmul_epilogue.py)."""
    so, sa_, sb_ = out._storage, a._storage, b._storage
    # (out's shape follows from a's and b's; id(rt): lost runtimes are kept, ids never reused)
    sig = (compute, a._shape, a._stride, a._offset, b._shape, b._stride, b._offset, out._offset, a.dtype,
           b.dtype, out.dtype, so is sa_, so is sb_, sa_ is sb_, id(rt), epi and epi.key)
    plan = _PLANS.get(sig)
    if plan is None:
        if out.dtype.name == "int64":   # (its error tag is per dispatch: not kept)
            return _run_wide(rt, out, a, b, compute)
        plan = _planned(rt, out, a, b, compute, epi, sig)
        if plan is None:   # nothing to compute
            return
    head, words = plan
    # (bind()'s bindings: the output, then each input storage not bound already)
    rows = [so.buffer_for_write(), 0, so.size]
    if sa_ is not so:
        rows += (sa_.buffer_for_read(), 0, sa_.size)
    if sb_ is not so and sb_ is not sa_:
        rows += (sb_.buffer_for_read(), 0, sb_.size)
    if epi is not None:
        for bid, size in epi.buffers:
            rows += (bid, 0, size)
        words += epi.words
    rt.record(head, words, rows)


def _params(out, a, b):
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    batch = out.shape[:-2]
    return ([out.numel(), M, N, K, a._offset, a._stride[-2], a._stride[-1], b._offset, b._stride[-2],
             b._stride[-1], out._offset] + list(batch) + list(a._stride[:-2]) + list(b._stride[:-2]))


def _planned(rt, out, a, b, compute, epi, sig):
    """(head, params) for a float or int32 product, kept under sig; None if out is empty."""
    total = out.numel()
    if total == 0:
        return None
    params = _params(out, a, b)
    nb = len(out.shape) - 2
    bufs, (sa, sb) = bind(out, a, b)
    nbuf = len(bufs)
    key = ("mm_small", a.dtype.name, b.dtype.name, out.dtype.name, compute, nb, sa, sb, nbuf, epi and epi.key)
    binding_kinds = kinds(bufs)
    if epi is not None:
        binding_kinds += epi.kinds()

    def make_code():
        if epi is None:
            return _source(a.dtype, b.dtype, out.dtype, compute, nb, len(params), sa, sb, nbuf)
        return (_source(a.dtype, b.dtype, out.dtype, compute, nb, len(params) + epi.nwords, sa, sb, nbuf, epi=True)
                + epi.code(nbuf, len(params)))

    pid = rt.pipeline(key, make_code, binding_kinds)
    nbound = nbuf + (len(epi.buffers) if epi is not None else 0)
    if len(_PLANS) > 1024:
        _PLANS.clear()
    plan = _PLANS[sig] = (dispatch_head(pid, rt.grid(-(-total // WORKGROUP)), nbound),
                          struct.pack(f"<{len(params)}I", *params))
    return plan


def _run_wide(rt, out, a, b, compute):
    """An int64 product: 64-bit sums, a result past 32 bits raised through errors.py."""
    total = out.numel()
    if total == 0:
        return
    params = _params(out, a, b) + [rt.errors.tag("matmul")]
    nb = len(out.shape) - 2
    bufs, (sa, sb) = bind(out, a, b)
    nbuf = len(bufs)
    key = ("mm_small", a.dtype.name, b.dtype.name, out.dtype.name, compute, nb, sa, sb, nbuf, None)
    pid = rt.pipeline(key, lambda: _source(a.dtype, b.dtype, out.dtype, compute, nb, len(params), sa, sb, nbuf,
                                           wide=True), kinds(bufs) + ["write"])
    rt.dispatch(pid, rt.grid(-(-total // WORKGROUP)), bufs + [rt.errors.binding],
                struct.pack(f"<{len(params)}I", *params))


def _source(adt, bdt, odt, T, nb, nparams, sa, sb, nbuf, wide=False, epi=False):
    storages = {0: odt.gpu_storage, sa: adt.gpu_storage, sb: bdt.gpu_storage}
    decl = declarations(nparams, [storages[k] for k in range(nbuf)])
    if wide:
        decl += f"\n@group(0) @binding({nbuf + 1}) " + ERR.WGSL_DECL + "\n" + helpers_source({"w", "wadd", "wmul", "wfits"})
    total, M, N, K = param(0), param(1), param(2), param(3)
    a_off, sam, sak, b_off, sbk, sbn, o_off = (param(4 + i) for i in range(7))
    bshape = [param(11 + d) for d in range(nb)]
    astr = [param(11 + nb + d) for d in range(nb)]
    bstr = [param(11 + 2 * nb + d) for d in range(nb)]
    batch = []
    if nb:
        batch.append("  { var q = bi;")
        for d in reversed(range(nb)):
            batch.append(f"    {{ let c = q % {bshape[d]}; q = q / {bshape[d]}; "
                         f"ab = ab + c * {astr[d]}; bb = bb + c * {bstr[d]}; }}")
        batch.append("  }")
    la = load(f"B{sa}[ab + m * {sam} + k * {sak}]", adt.gpu_storage, T)
    lb = load(f"B{sb}[bb + k * {sbk} + n * {sbn}]", bdt.gpu_storage, T)
    zero = "0.0" if T == "f32" else "0i"
    if wide:
        init, step = "vec2<u32>(0u, 0u)", f"tw_wadd(acc, tw_wmul(tw_w({la}), tw_w({lb})))"
        fin = (f"if (!tw_wfits(acc)) {{ {ERR.wgsl_raise(ERR.INT64_RANGE, param(nparams - 1))} }}\n"
               f"  B0[{o_off} + i] = bitcast<i32>(acc.x);")
    else:
        value = "tw_epilogue(i, acc)" if epi else store('acc', T, odt)
        init, step, fin = f"{T}({zero})", f"acc + {la} * {lb}", f"B0[{o_off} + i] = {value};"
    return decl + f"""
@compute @workgroup_size({WORKGROUP})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
  let i = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;
  if (i >= {total}) {{ return; }}
  let n = i % {N};
  let m = (i / {N}) % {M};
  let bi = i / ({M} * {N});
  var ab = {a_off};
  var bb = {b_off};
{chr(10).join(batch)}
  var acc = {init};
  for (var k = 0u; k < {K}; k = k + 1u) {{
    acc = {step};
  }}
  {fin}
}}
"""
