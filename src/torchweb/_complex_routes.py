"""Where a complex64 request goes. Complex tensors (torchweb/_complex/) sit above the creation
functions and casts that meet such requests: the package fills ROUTES when it is imported, and
they look the route up here instead of importing it."""

# "tensor" (data with a complex number, or dtype=complex64), "full", "random" (creation),
# "from_real" (a real tensor cast by Tensor.to), "binary" (a real tensor's operator with a
# Python complex number)
ROUTES = {}


def refusal(what):
    """The error for an op complex tensors do not have (PyTorch's type for an unsupported dtype)."""
    return NotImplementedError(
        f"{what} is not implemented for complex tensors in torchweb (complex64 supports creation, "
        "real/imag/conj/abs/angle, + - * / ** exp, sum/mean, matmul, shape ops, torch.fft and "
        "torch.stft: docs/complex.md); work on torch.view_as_real(z) for the rest")
