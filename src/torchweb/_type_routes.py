"""torch.* functions routed by an argument's tensor class: float64 tensors (host64/) and complex
tensors (_complex/) have their own forms of some functions; a routed function calls that form
when an argument (or, for cat/stack, a tensor of the sequence) is of the class, the registry's
op otherwise. Only calls of the routed names pay a loop over their arguments."""

import functools


def routed(orig, form, cls, sequence_first):
    """orig, calling form instead where an argument is a cls instance (cls: a class, or a tuple
    of classes: exactly these, not their subclasses)."""
    cls = cls if isinstance(cls, tuple) else (cls,)
    if sequence_first:
        def f(tensors, *args, **kwargs):
            for t in tensors:
                if type(t) in cls:
                    return form(tensors, *args, **kwargs)
            return orig(tensors, *args, **kwargs)
    else:
        def f(*args, **kwargs):
            for a in args:
                if type(a) in cls:
                    return form(*args, **kwargs)
            if kwargs:
                for a in kwargs.values():
                    if type(a) in cls:
                        return form(*args, **kwargs)
            return orig(*args, **kwargs)
    f = functools.wraps(orig)(f)
    # (tests/test_registry.py: the op behind the name is __wrapped__, through every routing)
    f.__wrapped__ = orig.__wrapped__ if getattr(orig, "_routes_float64", False) else orig
    f._routes_float64 = True
    return f


def refusing(name, refusal):
    """A method that raises refusal(what) for a class without it."""
    what = name.strip("_") if name.startswith("__") else f"Tensor.{name}"

    def refused(self, *args, **kwargs):
        raise refusal(what)
    refused.__name__ = name
    return refused
