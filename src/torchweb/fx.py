"""torch.fx as seen by code that runs eagerly: `torch.fx.wrap("name")` (which torchvision and
other libraries call at import, to keep a function opaque to symbolic tracing) registers
nothing and gives back its argument, since nothing here traces. Tracing itself
(symbolic_trace, GraphModule, Tracer, ...) is refused with an AttributeError that says why."""

from ._refused import refuse_the_rest


def wrap(fn_or_name):
    """A no-op: the function (or its name) given back."""
    return fn_or_name


__getattr__ = refuse_the_rest(
    "torch.fx", "torch.fx traces programs into graphs for compilers, and torchweb runs them eagerly "
    "(torch.compile captures GPU work instead)")
