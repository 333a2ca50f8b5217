"""torch.OutOfMemoryError and torch.AcceleratorError: the exception classes scripts catch
(`except torch.OutOfMemoryError:` to retry with a smaller batch), both RuntimeErrors as in
PyTorch."""


class OutOfMemoryError(RuntimeError):
    """The device could not allocate memory for a tensor."""
    __module__ = "torchweb"


class AcceleratorError(RuntimeError):
    """An error the accelerator (the WebGPU device) reported."""
    __module__ = "torchweb"
