"""GPU storage: a pooled buffer that goes back to the pool when the last tensor using it dies.

A storage may be *pending* (lazy.py): its values are an elementwise expression not yet run.
Reading `buffer_id` is how every kernel, readback and upload reaches the buffer, so it is where
pending work is realized: the storage's own expression, and every pending expression that reads
this storage (which must see its values before anything writes them)."""

from . import lazy


class GPUStorage:
    __slots__ = ("rt", "_buffer_id", "size", "numel", "dtype", "version", "pending", "readers",
                 "touched", "__weakref__")

    device_type = "webgpu"

    def __init__(self, rt, numel, dtype):
        self.rt = rt
        elem = 2 if dtype.gpu_storage == "f16" else 4
        self._buffer_id, self.size = rt.alloc(numel * elem)
        self.numel = numel
        self.dtype = dtype
        self.version = 0   # autograd's version counter, shared by every view of this storage
        self.pending = None    # a lazy.Node: the expression whose values this buffer will hold
        self.readers = None    # {id: weakref} of pending storages whose expressions read this one
        self.touched = False   # the buffer has been bound, written or read (no longer fresh)

    @property
    def buffer_id(self):
        self.touched = True
        if self.rt.capture is not None:
            self.rt.capture.storages[self._buffer_id] = self
        if self.pending is not None:
            lazy.realize(self)
        if self.readers:
            lazy.realize_readers(self)
        return self._buffer_id

    def buffer_for_read(self):
        """The buffer, for a fused kernel that only reads it (lazy.py): realized if pending, but
        without realizing other pending readers of it, which may depend on work being recorded
        right now (their turn comes when they are read)."""
        self.touched = True
        if self.rt.capture is not None:
            self.rt.capture.storages[self._buffer_id] = self
        if self.pending is not None:
            lazy.realize(self)
        return self._buffer_id

    def __del__(self):
        try:
            if self.pending is not None:
                lazy.forget(self)
            self.rt.free(self._buffer_id, self.size)
        except Exception:  # interpreter shutdown: the runtime may be gone already
            pass
