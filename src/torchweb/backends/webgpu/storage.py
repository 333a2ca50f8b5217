"""GPU storage: a pooled buffer that goes back to the pool when the last tensor using it dies."""


class GPUStorage:
    __slots__ = ("rt", "buffer_id", "size", "numel", "dtype", "version", "__weakref__")

    device_type = "webgpu"

    def __init__(self, rt, numel, dtype):
        self.rt = rt
        elem = 2 if dtype.gpu_storage == "f16" else 4
        self.buffer_id, self.size = rt.alloc(numel * elem)
        self.numel = numel
        self.dtype = dtype
        self.version = 0   # autograd's version counter, shared by every view of this storage

    def __del__(self):
        try:
            self.rt.free(self.buffer_id, self.size)
        except Exception:  # interpreter shutdown: the runtime may be gone already
            pass
