"""The refusal a backend raises when a kernel would bind more of one buffer than the device
allows (WebGPU's maxStorageBufferBindingSize: 128 MiB by default in browsers). ops/lowering.py
catches it to split an op into pieces that fit; past that it reaches the user as a
RuntimeError naming the op, the size and the limit."""


class BindingTooLarge(RuntimeError):
    """A kernel would bind `size` bytes of one buffer, more than `limit`."""

    def __init__(self, message, size=0, limit=0):
        super().__init__(message)
        self.size = size
        self.limit = limit
