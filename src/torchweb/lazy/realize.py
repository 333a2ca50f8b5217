"""Realization: a pending storage's values written by its backend's run_fused, called
explicitly wherever bytes are needed, never from a property:

- realize_for_read(storage): before a kernel binds it as an input, before a readback.
- realize_for_write(storage): before anything writes it (a kernel's output, an upload, an
  in-place host write): its own pending values, and first every pending expression that reads
  it, so that a write after a deferred read leaves the read its old values (eager order).
- realize_all(): synchronize, torch.compile's capture (every pending storage written).

The backends call the first two where they bind buffers, through the hooks of
backends/pending.py that install() sets (a backend never imports this layer). Pending storages
realized together (the readers of a storage about to be written, realize_all) go in as few
kernels as fit: one multi-output kernel per batch of expressions over the same shape."""

from ..backends import backend_for, pending as _hooks
from ..backends.webgpu.pool import rounded_size
from . import graph

MAX_BUFFERS = 8        # storage buffers a kernel binds at most (WebGPU's default per stage)
MAX_BATCH_NODES = 96   # ops of one multi-output kernel at most
_MATMUL = _hooks.MATMUL_ROOT   # a deferred product's root (kernel_edges.matmul_epilogue)
BARE_PRODUCTS = {}   # id of a deferred product's key -> its signature's [deferred, realized alone] (kernel_edges)


_RUN_FUSED = {}   # device type -> its backend's run_fused (every realize asks)


def _run_fused(device_type):
    """The backend's run_fused for storages of device_type."""
    run = _RUN_FUSED.get(device_type)
    if run is None:
        run = _RUN_FUSED[device_type] = backend_for(device_type).run_fused
    return run


def realize(storage):
    """Write a pending storage's values: one fused kernel for its whole expression."""
    node = storage.pending
    storage.pending = None   # (the entries of its group now skip it)
    if node.key[0] == _MATMUL:
        _count_bare(node)
    _run_fused(storage.device_type)((storage,), (node,))


def _count_bare(node):
    """A deferred product realized: counted for kernel_edges where nothing was fused into it."""
    if not node.inlined:
        counts = BARE_PRODUCTS.get(id(node.key))
        if counts is not None:
            counts[1] += 1


def realize_for_read(storage):
    """storage's own values written, if pending."""
    if storage.pending is not None:
        realize(storage)


def realize_for_write(storage):
    """storage's pending readers run (on its current values), then its own pending values."""
    if storage.readers:
        realize_many(graph.pending_readers(storage))
    if storage.pending is not None:
        realize(storage)


def realize_all():
    """Write every pending storage (torchweb.webgpu.synchronize(): all work done, as eager)."""
    realize_many(graph.pending_storages())
    graph.clear_groups()


def materialize(t):
    """Compute tensor t's values now if they are pending (so what they read can be freed)."""
    if t._storage.pending is not None:
        realize(t._storage)


def realize_many(storages):
    """Write these pending storages, several expressions of one shape per kernel where their
    buffers fit one dispatch. (None reads another's pending values: an expression's leaves
    were realized when it was recorded, and a storage read by a pending one is never deferred.)"""
    if len(storages) == 1:
        if storages[0].pending is not None:
            realize(storages[0])
        return
    batches = {}   # (device type, shape) -> [[storages], {buffer ids}, nodes]
    order = []
    for s in storages:
        node = s.pending
        if node is None:
            continue
        s.pending = None
        if node.key[0] == _MATMUL:
            _count_bare(node)
        key = (s.device_type, node.shape)
        batch = batches.get(key)
        buffers = node.storages.keys() | {id(s)}
        if batch is not None and len(batch[1] | buffers) <= MAX_BUFFERS \
                and batch[2] + node.size <= MAX_BATCH_NODES:
            batch[0].append((s, node))
            batch[1] |= buffers
            batch[2] += node.size
            continue
        batch = batches[key] = [[(s, node)], set(buffers), node.size]
        order.append(batch)
    for batch in order:
        outs, nodes = zip(*batch[0])
        _run_fused(outs[0].device_type)(outs, nodes)


def write_into(src, dst, stride, whole):
    """Run pending src's expression with dst's storage as its output (an op's out=): one kernel
    instead of the op's then a copy's. dst: a float32 storage whose first numel elements, in
    contiguous `stride`, are the output (whole: that is all of dst). False (nothing done) when
    the expression reads dst in another layout: an element would be read after another thread
    wrote it."""
    node = src.pending
    if id(dst) in node.storages and not _reads_in_place(node, dst, stride):
        return False
    src.pending = None   # (not a pending reader of dst: it reads dst's old values itself, element by element)
    if whole:
        # overwritten whole: a pending expression of dst is never needed (consumers that took
        # it into theirs compute it from its inputs)
        dst.pending = None
    realize_for_write(dst)   # its other pending readers run now, on the old values (a partial pending dst too)
    _run_fused(dst.device_type)((dst,), (node,))
    return True


def _reads_in_place(node, dst, stride):
    """Every read of dst in node's expression is element i for output element i."""
    for storage, st, offset, dtype in node.leaves:
        if storage is dst and (offset or st != stride or dtype.name != "float32"):
            return False
    return True


def unallocated_bytes(pool):
    """Bytes the pending storages of a webgpu pool's runtime would hold had they their buffers
    (memory_allocated() counts a tensor whether or not its buffer was taken yet)."""
    total = 0
    for s in graph.pending_storages():
        if not s.touched and s.rt.pool is pool:
            total += rounded_size(max(4, (s.numel * (2 if s.dtype.gpu_storage == "f16" else 4) + 3) & ~3))
    return total


def drop_pending(rt):
    """Forget the pending expressions of a webgpu runtime's storages: its device was lost, so
    they can never run (touching such a storage raises DeviceLostError from the runtime)."""
    for s in graph.pending_storages():
        if getattr(s, "rt", None) is rt:
            s.pending = None
    graph.prune_groups()


def install(matmul_partners):
    """Set the hooks through which the backends ask for realization (backends/pending.py);
    matmul_partners: kernel_edges' (passed in by the package: kernel_edges imports this module)."""
    _hooks.realize_for_read = realize_for_read
    _hooks.realize_for_write = realize_for_write
    _hooks.realize_all = realize_all
    _hooks.unallocated_bytes = unallocated_bytes
    _hooks.drop_pending = drop_pending
    _hooks.matmul_partners = matmul_partners
