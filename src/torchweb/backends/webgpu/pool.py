"""A bounded pool of GPU buffers, so that tensors that die give their memory to the next ones.

Sizes are rounded to a few steps per power of two (1, 1.25, 1.5, 1.75 x 2^k), so a freed
buffer fits many later requests while wasting at most a quarter. Free buffers beyond
`max_free_bytes` are destroyed, oldest first; that bound starts at 256 MiB and grows to twice
the largest buffer handed out (up to GROW_LIMIT).
"""

from collections import OrderedDict
from heapq import heapify, heappop, heappush

MIN_BYTES = 256
GROW_LIMIT = 1 << 30   # the free bytes a pool may keep, at most, after growing for big buffers


def rounded_size(nbytes):
    if nbytes <= MIN_BYTES:
        return MIN_BYTES
    top = 1 << (nbytes - 1).bit_length()      # next power of two
    step = top // 8                           # quarter steps of the lower power of two
    return -(-nbytes // step) * step


def _heap_remove(heap, item):
    heap.remove(item)
    heapify(heap)


_ROUNDED = {}   # nbytes -> rounded_size(nbytes): every buffer taken asks


def _rounded_cached(nbytes):
    if len(_ROUNDED) > 4096:
        _ROUNDED.clear()
    size = _ROUNDED[nbytes] = rounded_size(nbytes)
    return size


class BufferPool:
    def __init__(self, create, destroy, max_free_bytes=256 << 20):
        self._create = create      # (nbytes) -> buffer id
        self._destroy = destroy    # (buffer id) -> None
        self.max_free_bytes = max_free_bytes
        self._free = {}            # size -> [ids]
        self._lru = OrderedDict()  # id -> size, free buffers, oldest first
        self.free_bytes = 0
        self._live = 0             # bytes of the buffers handed out and not yet released
        self.peak_bytes = 0

    @property
    def live_bytes(self):
        """Bytes held by live storages: the buffers handed out, plus what the pending storages
        that have no buffer yet (lazy.py allocates them when realized) will take."""
        from . import lazy
        return self._live + lazy.unallocated_bytes(self)

    def acquire(self, nbytes):
        size = _ROUNDED.get(nbytes) or _rounded_cached(nbytes)
        if 2 * size > self.max_free_bytes and 2 * size <= GROW_LIMIT:
            # keep room for two buffers of the largest size in use: a program that makes and
            # drops a big temporary each call would otherwise create and destroy it every time
            # (on an H100, 256 MiB temporaries made a fused 64M-element op 9x slower)
            self.max_free_bytes = 2 * size
        ids = self._free.get(size)
        if ids:
            # the lowest free id, whatever order buffers came back in: a training loop then gets
            # the same buffers at the same points every step, and the bind groups made for them
            # (one per combination of buffers, cached by the drivers) are made once
            bid = heappop(ids)
            del self._lru[bid]
            self.free_bytes -= size
        else:
            bid = self._create(size)
        self._live += size
        if self._live > self.peak_bytes:
            self.peak_bytes = self._live
        return bid, size

    def release(self, bid, size):
        self._live -= size
        heappush(self._free.setdefault(size, []), bid)
        self._lru[bid] = size
        self.free_bytes += size
        if self.free_bytes > self.max_free_bytes:
            self.trim(self.max_free_bytes)

    def take(self, bid):
        """Take free buffer bid out of the pool for good (a captured graph reserves it): its
        size, or None if bid is not free."""
        size = self._lru.pop(bid, None)
        if size is None:
            return None
        _heap_remove(self._free[size], bid)
        self.free_bytes -= size
        self._live += size
        return size

    def trim(self, keep_bytes=0):
        while self.free_bytes > keep_bytes and self._lru:
            bid, size = self._lru.popitem(last=False)
            _heap_remove(self._free[size], bid)
            self.free_bytes -= size
            self._destroy(bid)
