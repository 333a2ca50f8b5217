"""Buffer bindings shared by the kernel generators.

Binding 0 is the parameters uniform, binding 1 the output buffer, then one binding per other
distinct buffer: operands that live in the same buffer share a binding, because WebGPU forbids
binding a buffer twice in a dispatch when one of the bindings is writable.
"""


def bind(out, *inputs):
    """(buffers to bind, output's first, as (id, size); the slot of each input): bind_rows'
    bindings as pairs, for the kernels that dispatch through Runtime.dispatch."""
    rows, slots = bind_rows(out, *inputs)
    return list(zip(rows[0::3], rows[2::3])), list(slots)


def bind_rows(out, *inputs):
    """The bindings for Runtime.record: (the buffers as flat (id, 0, size) rows, output's
    first; the slot of each input, a tuple)."""
    so = out._storage
    rows = [so.buffer_for_write(), 0, so.size]
    slot_of = {so: 0}
    slots = []
    for t in inputs:
        s = t._storage
        slot = slot_of.get(s)
        if slot is None:
            slot = slot_of[s] = len(slot_of)
            rows += (s.buffer_for_read(), 0, s.size)
        slots.append(slot)
    return rows, tuple(slots)


def kinds(buffers):
    """The pipeline layout's binding kinds for these buffers."""
    return ["uniform", "write"] + ["read"] * (len(buffers) - 1)


def declarations(nparams, storages):
    """WGSL declarations: the uniform P of nparams u32 words and buffers B0.. (B0 written).
    storages: the element type of each slot. Starts with `enable f16;` where needed."""
    lines = ["enable f16;"] if "f16" in storages else []
    lines.append(f"@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {-(-nparams // 4)}>;")
    for s, st in enumerate(storages):
        access = "read_write" if s == 0 else "read"
        lines.append(f"@group(0) @binding({s + 1}) var<storage, {access}> B{s}: array<{st}>;")
    return "\n".join(lines)
