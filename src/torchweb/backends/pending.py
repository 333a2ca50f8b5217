"""What a backend calls where it needs a storage's bytes and the storage may be *pending*: its
values an expression the lazy layer (torchweb/lazy, above the backends) has not run yet, or
read by such expressions. The lazy layer installs these when it loads (lazy/realize.py); a
backend never imports it. Before it loads nothing is pending, and these do nothing."""


def _nothing(*_):
    return 0


realize_for_read = _nothing    # (storage): its own pending values written
realize_for_write = _nothing   # (storage): that, and its pending readers run first (eager order)
realize_all = _nothing         # (): every pending storage written (synchronize, capture)
unallocated_bytes = _nothing   # (pool): bytes the pending storages of a pool will take
matmul_partners = lambda *_: ()   # (storage, node): the other pending storages its matmul's kernel may store
drop_pending = _nothing        # (runtime): forget its storages' pending work (its device was lost)
