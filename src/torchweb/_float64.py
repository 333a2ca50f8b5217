"""Where a float64 request goes. float64 tensors live on the host (torchweb/host64/), a package
above the creation functions and conversions that meet such requests: it fills ROUTES when it
is imported, and they look the route up here instead of importing it."""

# "tensor", "full", "from_list", "linspace" (creation) and "to" (a cast): host64's functions
ROUTES = {}

_WHAT = ("float64 tensors are held on the host (WebGPU has no 64-bit floats) and support "
         "creation, elementwise math, cumsum/cumprod, sum/mean/prod/max/min, indexing, cat/stack "
         "and casts")


def refusal(what):
    """The error for an op float64 tensors do not have."""
    return RuntimeError(f"{what} does not support float64: {_WHAT}. Cast with .float() (or "
                        ".to(torch.float32)) to compute it on the GPU")
