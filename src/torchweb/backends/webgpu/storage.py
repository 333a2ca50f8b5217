"""GPU storage: a pooled buffer that goes back to the pool when the last tensor using it dies.

A storage may be *pending* (torchweb/lazy): its values are an elementwise expression not yet
run, or *read* by pending expressions. Kernels, readbacks and uploads reach the buffer through
buffer_for_read() or buffer_for_write(), which ask the lazy layer (through backends/pending.py)
to write what the access needs: for a read, the storage's own expression; for a write, also
every pending expression that reads this storage first (they must see its old values).

The buffer itself is taken from the pool only when first needed (`_buffer_id` or `size` read):
most pending storages are fused into a consumer's kernel and die without ever needing one, and
a pool acquire and release per op is a good part of an op's Python time."""

from .. import pending


class GPUStorage:
    # _buffer_id and size stay unset until the buffer is allocated (__getattr__ does it);
    # readers_limit is set with readers (lazy/graph.py)
    __slots__ = ("rt", "_buffer_id", "size", "numel", "dtype", "version", "pending", "readers",
                 "readers_limit", "touched", "__weakref__")

    device_type = "webgpu"

    def __init__(self, rt, numel, dtype):
        self.rt = rt
        self.numel = numel
        self.dtype = dtype
        self.version = 0   # autograd's version counter, shared by every view of this storage
        self.pending = None    # a lazy Node: the expression whose values this buffer will hold
        self.readers = None    # {id: group} of groups of pending storages that read this one (Node.group)
        self.touched = False   # it has a buffer, bound, written or read since (no longer fresh)
        if numel > rt.big_numel:
            nbytes = numel * (2 if dtype.gpu_storage == "f16" else 4)
            if nbytes > rt.max_buffer:
                rt.alloc(nbytes)   # raises its "larger than this adapter's largest buffer" error, at the op
            if nbytes > rt.max_binding:
                rt.add_big(self)   # (kernels bind windows of it: windows.py)

    def _allocate(self):
        """Take the buffer from the pool. touched is True from here on: a storage is touched
        exactly when it has a buffer (what __del__ and the lazy layer's unallocated_bytes go by)."""
        rt = self.rt
        capture = rt.capture   # (first: a lost runtime's raises, this storage's device is gone)
        # (runtime.take inline: every op's output comes here)
        bid, self.size = rt.pool.acquire(self.numel * (2 if self.dtype.gpu_storage == "f16" else 4))
        if capture is not None:
            capture.on_acquire(bid)
        self._buffer_id = bid
        self.touched = True
        return bid

    def __getattr__(self, name):
        """Called for unset slots only: _buffer_id and size before the buffer exists."""
        if name == "_buffer_id":
            return self._allocate()
        if name == "size":
            self._allocate()
            return self.size
        raise AttributeError(f"'GPUStorage' object has no attribute '{name}'")

    def buffer_for_read(self):
        """The buffer id, for a kernel or readback that only reads it: its pending values
        written first. (Other pending readers of it may wait: reading changes nothing.)"""
        bid = self._buffer_id   # (taken from the pool on first use: __getattr__)
        if self.rt.capture is not None:
            self.rt.capture.storages[bid] = self
        if self.pending is not None:
            pending.realize_for_read(self)
        return bid

    def buffer_for_write(self):
        """The buffer id, for a kernel or upload that writes it (or may: bound writable): its
        pending readers run first, on its current values, and its own pending values are
        written (a partial write keeps the rest)."""
        # (a kernel's fresh output takes its buffer here: _allocate at once, not through __getattr__)
        bid = self._buffer_id if self.touched else self._allocate()
        if self.rt.capture is not None:
            self.rt.capture.storages[bid] = self
        if self.pending is not None or self.readers:
            pending.realize_for_write(self)
        return bid

    def __del__(self):
        try:
            # (died pending: nothing will read it; its group's registrations are dropped in
            # bulk once nothing in the group is pending: lazy._prune)
            if self.touched:   # untouched: no buffer was ever taken, none to give back
                rt = self.rt
                if rt.plain_free:   # (Runtime.free's common case, inline: every storage dies)
                    rt.pool.release(self._buffer_id, self.size)
                else:
                    rt.free(self._buffer_id, self.size)
        except Exception:  # interpreter shutdown: the runtime may be gone already
            pass
