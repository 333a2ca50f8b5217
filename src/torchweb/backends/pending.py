"""What a backend calls where it needs a storage's bytes and the storage may be *pending*: its
values an expression the lazy layer (torchweb/lazy, above the backends) has not run yet, or
read by such expressions. The lazy layer installs these when it loads (lazy/realize.py); a
backend never imports it. Before it loads nothing is pending, and these do nothing.
Also what both sides read in a node's key: the root of a deferred matmul (lazy/kernel_edges.py
makes it, a backend's run_fused stores its expression with the matmul's kernel)."""

MATMUL_ROOT = ("matmul", "f")


def holds_matmul(key):
    """Whether the expression of a node's key holds a deferred matmul."""
    return key[0] == MATMUL_ROOT or any(type(part[0]) is not str and holds_matmul(part) for part in key[1:])


def _nothing(*_):
    return 0


realize_for_read = _nothing    # (storage): its own pending values written
realize_for_write = _nothing   # (storage): that, and its pending readers run first (eager order)
realize_all = _nothing         # (): every pending storage written (synchronize, capture)
unallocated_bytes = _nothing   # (pool): bytes the pending storages of a pool will take
matmul_partners = lambda *_: ()   # (storage, node): the other pending storages its matmul's kernel may store
drop_pending = _nothing        # (runtime): forget its storages' pending work (its device was lost)
