"""A bounded pool of GPU buffers, so that tensors that die give their memory to the next ones.

Sizes are rounded to a few steps per power of two (1, 1.25, 1.5, 1.75 x 2^k), so a freed
buffer fits many later requests while wasting at most a quarter. Free buffers beyond the limit
are destroyed, oldest first. The limit is the larger of `max_free_bytes` (256 MiB at first,
grown to twice the largest buffer handed out, up to GROW_LIMIT) and the working set: the most
bytes live at once so far (up to WORKING_SET_LIMIT), as PyTorch's caching allocator keeps what a
program once held. A training step frees its activations at its end and needs them again in the
next: with a smaller limit the pool destroyed part of them each step and the next step created
them again (a nanoGPT step on an H100: 91 buffers and 510 bind groups remade every step).
Memory stays within the program's own peak; `torch.webgpu.empty_cache()` gives it back.
"""

from collections import OrderedDict
from heapq import heapify, heappop, heappush

from .. import pending

MIN_BYTES = 256
GROW_LIMIT = 1 << 30   # the free bytes a pool may keep, at most, after growing for big buffers
WORKING_SET_LIMIT = 2 << 30   # ...and at most this much for the working set (a nanoGPT step
# holds ~1.03 GB at its peak: with 1 GB the pool remade 8 buffers a step)


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
    def __init__(self, create, destroy, max_free_bytes=256 << 20, keep_working_set=True):
        self._create = create      # (nbytes) -> buffer id
        self._destroy = destroy    # (buffer id) -> None
        self.keep_working_set = keep_working_set
        self._free = {}            # size -> [ids]
        self._lru = OrderedDict()  # id -> size, free buffers, oldest first
        self._held = 0             # bytes of the pool's buffers, handed out or free
        self._live = 0             # bytes of the buffers handed out and not yet released
        # (acquire and release test one bound each, kept by _bounds: _high, the live bytes past
        # which the peak or the working set grows; limit, the free bytes past which trim runs)
        self._max_free = max_free_bytes
        self._peak = 0
        self._working_set = 0      # the most bytes live at once (up to WORKING_SET_LIMIT), if kept
        self._bounds()

    def _bounds(self):
        ws = self._working_set
        self.limit = max(self._max_free, ws)   # the free bytes kept
        grows = self.keep_working_set and ws < WORKING_SET_LIMIT
        self._high = min(self._peak, ws) if grows else self._peak

    @property
    def max_free_bytes(self):
        return self._max_free

    @max_free_bytes.setter
    def max_free_bytes(self, nbytes):
        self._max_free = nbytes
        self._bounds()

    @property
    def peak_bytes(self):
        """The most bytes handed out at once (tests and torch.webgpu.max_memory_allocated)."""
        return self._peak

    @peak_bytes.setter
    def peak_bytes(self, nbytes):
        self._peak = nbytes
        self._bounds()

    @property
    def working_set(self):
        return self._working_set

    @property
    def free_bytes(self):
        """Bytes of the free buffers the pool keeps."""
        return self._held - self._live

    @property
    def live_bytes(self):
        """Bytes held by live storages: the buffers handed out, plus what the pending storages
        that have no buffer yet (allocated when the lazy layer realizes them) will take."""
        return self._live + pending.unallocated_bytes(self)

    def acquire(self, nbytes):
        size = _ROUNDED.get(nbytes) or _rounded_cached(nbytes)
        ids = self._free.get(size)
        if ids:
            # the lowest free id, whatever order buffers came back in: a training loop then gets
            # the same buffers at the same points every step, and the bind groups made for them
            # (one per combination of buffers, cached by the drivers) are made once
            bid = heappop(ids)
            del self._lru[bid]
        else:
            bid = self._make(size)
        live = self._live = self._live + size
        if live > self._high:
            self._grow(live)
        return bid, size

    def _make(self, size):
        if 2 * size > self._max_free and 2 * size <= GROW_LIMIT:
            # keep room for two buffers of the largest size in use: a program that makes and
            # drops a big temporary each call would otherwise create and destroy it every time
            # (on an H100, 256 MiB temporaries made a fused 64M-element op 9x slower)
            self.max_free_bytes = 2 * size
        bid = self._create(size)
        self._held += size
        return bid

    def _grow(self, live):
        """live bytes past the peak or the working set: raise them."""
        if live > self._peak:
            self._peak = live
        if live > self._working_set and self.keep_working_set:
            self._working_set = min(live, WORKING_SET_LIMIT)
        self._bounds()

    def release(self, bid, size):
        live = self._live = self._live - size
        heappush(self._free.setdefault(size, []), bid)
        self._lru[bid] = size
        if self._held - live > self.limit:
            self.trim(self.limit)

    def is_free(self, bid):
        """Whether buffer bid is in the pool (released, not handed out again)."""
        return bid in self._lru

    def take(self, bid):
        """Take free buffer bid out of the pool for good (a captured graph reserves it): its
        size, or None if bid is not free."""
        size = self._lru.pop(bid, None)
        if size is None:
            return None
        _heap_remove(self._free[size], bid)
        self._live += size
        return size

    def forget_working_set(self):
        """Keep only max_free_bytes from now on (until the working set grows again)."""
        self._working_set = 0
        self._bounds()

    def drain(self, keep=()):
        """Take the free buffers whose ids are not in keep out of the pool without destroying
        them (a driver out of memory destroys them at once and tries again): their ids."""
        ids = [bid for bid in self._lru if bid not in keep]
        for bid in ids:
            size = self._lru.pop(bid)
            _heap_remove(self._free[size], bid)
            self._held -= size
        return ids

    def trim(self, keep_bytes=0):
        while self._held - self._live > keep_bytes and self._lru:
            bid, size = self._lru.popitem(last=False)
            _heap_remove(self._free[size], bid)
            self._held -= size
            self._destroy(bid)
