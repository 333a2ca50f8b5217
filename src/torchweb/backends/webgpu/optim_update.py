"""The webgpu device's fused elementwise update (kernels/fused_update.py): one dispatch that
reads and writes several same-sized buffers, as an optimizer's step does per parameter."""

from .kernels import fused_update as fu_kernel
from .runtime import get_runtime


def fused_update(key, tensors, names, writes, body, scalar_names, scalars, fresh=()):
    """Run body (assignments in the shared expression language) over contiguous tensors of one
    numel, storing the names in writes back in place; scalars are f32 uniforms; the names in
    fresh are read as zeros (new state, not filled)."""
    rt = get_runtime()
    fu_kernel.run(rt, key, tensors, names, writes, body, scalar_names, scalars, fresh)
    if rt.capture is not None and scalars and tensors[0].numel():
        # a captured step's replay recomputes these (step count, bias corrections, lr)
        rt.capture.note_scalars(1 + len(tensors), len(scalars))
