"""Traced values: what an optimizer's update runs on inside a fusing scope (scope.py) instead of
tensors. A Value has the Tensor methods PyTorch's single-tensor optimizer functions use
(`exp_avg.lerp_(grad, 1 - beta1)`, `exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=...)`,
`param.addcdiv_(exp_avg, denom, value=-step_size)`); each appends one entry to the scope's
trace, (op key, written slot, read slots with None for the next number), and returns a Value,
so the update is written once, as PyTorch's, and runs as one kernel whose temporaries
(`denom`) never become buffers. Numbers become the kernel's float32 uniforms, in the order
the ops read them.

The op names are rows of the elementwise table; ops/elementwise registers them as the lazy
Nodes' rows (ROW_NAMES)."""

ROW_NAMES = ("neg", "abs", "sqrt", "square", "sign", "add", "sub", "mul", "div", "maximum", "minimum",
             "add_alpha", "sub_alpha", "copy")

_NUMBERS = (float, int)
_ADD, _SUB, _MUL, _DIV = ("add", "f"), ("sub", "f"), ("mul", "f"), ("div", "f")
_ADD_ALPHA, _SUB_ALPHA, _COPY = ("add_alpha", "f"), ("sub_alpha", "f"), ("copy", "f")
_NEG, _ABS, _SQRT, _SQUARE, _SIGN = ("neg", "f"), ("abs", "f"), ("sqrt", "f"), ("square", "f"), ("sign", "f")
_MAXIMUM, _MINIMUM = ("maximum", "f"), ("minimum", "f")


class Value:
    """One float32 value per element of the scope's shape: a tensor bound to the scope (a slot
    read and maybe written) or a temporary of the update."""

    __slots__ = ("scope", "slot")

    def __init__(self, scope, slot):
        self.scope, self.slot = scope, slot

    # -- the trace's entries

    def _read(self, other):
        """other's part of an entry: its slot, or None with the number noted."""
        if type(other) is Value:
            return other.slot
        self.scope.scalars.append(other if type(other) in _NUMBERS else _number(other))
        return None

    def _new(self, key, args):
        """A new temporary = key(args)."""
        scope = self.scope
        slot = len(scope.kinds)
        scope.kinds.append(None)
        scope.trace.append((key, slot, args))
        values = scope.values   # (made once per slot: see scope.value)
        return values[slot] if slot < len(values) else scope.value(slot)

    def _set(self, key, args):
        """This value = key(args), in place."""
        scope = self.scope
        scope.trace.append((key, self.slot, args))
        scope.written[self.slot] = None
        return self

    def _binary(self, key, other, alpha, alpha_key):
        b = self._read(other)
        if alpha == 1:
            return key, (self.slot, b)
        if b is None:   # (a number times alpha: one number)
            self.scope.scalars[-1] *= alpha
            return key, (self.slot, None)
        self.scope.scalars.append(alpha)
        return alpha_key, (self.slot, b, None)

    # -- the methods (the unary and plain binary ones are made from their rows below the class)

    def add(self, other, *, alpha=1):
        return self._new(*self._binary(_ADD, other, alpha, _ADD_ALPHA))

    def sub(self, other, *, alpha=1):
        return self._new(*self._binary(_SUB, other, alpha, _SUB_ALPHA))

    def add_(self, other, *, alpha=1):
        return self._set(*self._binary(_ADD, other, alpha, _ADD_ALPHA))

    def sub_(self, other, *, alpha=1):
        return self._set(*self._binary(_SUB, other, alpha, _SUB_ALPHA))

    def addcmul(self, tensor1, tensor2, *, value=1):
        return self._new(_ADD, (self.slot, self._product(_MUL, tensor1, tensor2, value)))

    def addcdiv(self, tensor1, tensor2, *, value=1):
        return self._new(_ADD, (self.slot, self._product(_DIV, tensor1, tensor2, value)))

    def addcmul_(self, tensor1, tensor2, *, value=1):
        return self._set(_ADD, (self.slot, self._product(_MUL, tensor1, tensor2, value)))

    def addcdiv_(self, tensor1, tensor2, *, value=1):
        return self._set(_ADD, (self.slot, self._product(_DIV, tensor1, tensor2, value)))

    def copy_(self, src):
        return self._set(_COPY, (self._read(src),))

    def lerp_(self, end, weight):
        """self + weight * (end - self), from end where |weight| >= 0.5 (PyTorch's two forms)."""
        if type(weight) not in _NUMBERS:
            weight = _number(weight)
        diff = end.sub(self)
        if abs(weight) < 0.5:
            return self._set(_ADD, (self.slot, diff.mul(weight).slot))
        return self._set(_SUB, (end.slot, diff.mul(1 - weight).slot))

    def clamp(self, min=None, max=None):
        """min(max(self, min), max), as PyTorch's clamp (either bound may be None)."""
        out = self if min is None else self.maximum(min)
        return out if max is None else out.minimum(max)

    def clamp_(self, min=None, max=None):
        return self.copy_(self.clamp(min, max))

    def _product(self, op, tensor1, tensor2, value):
        """The slot of value * tensor1 <op> tensor2, in PyTorch's order (addcmul, addcdiv)."""
        t1 = tensor1 if value == 1 else tensor1.mul(value)
        return t1._new(op, (t1.slot, self._read(tensor2))).slot

    def __radd__(self, other):
        return self.add(other)

    def __rmul__(self, other):
        return self.mul(other)

    def __rsub__(self, other):
        return self._new(_SUB, (self._read(other), self.slot))

    def __rtruediv__(self, other):
        return self._new(_DIV, (self._read(other), self.slot))


def _unary(key):
    """key's out-of-place and in-place methods."""
    return (lambda self: self._new(key, (self.slot,)),
            lambda self: self._set(key, (self.slot,)))


def _binary(key):
    """key's out-of-place and in-place methods (other: a value or a number)."""
    return (lambda self, other: self._new(key, (self.slot, self._read(other))),
            lambda self, other: self._set(key, (self.slot, self._read(other))))


# name -> its out-of-place and in-place methods (maximum_ and minimum_ are not Tensor methods)
for _name, _methods in [("neg", _unary(_NEG)), ("abs", _unary(_ABS)), ("sqrt", _unary(_SQRT)),
                        ("square", _unary(_SQUARE)), ("sign", _unary(_SIGN)), ("mul", _binary(_MUL)),
                        ("div", _binary(_DIV)), ("maximum", _binary(_MAXIMUM)[:1]), ("minimum", _binary(_MINIMUM)[:1])]:
    for _method, _suffix in zip(_methods, ("", "_")):
        _method.__name__ = _name + _suffix
        setattr(Value, _method.__name__, _method)
Value.__add__, Value.__sub__, Value.__mul__, Value.__truediv__, Value.__neg__ = \
    Value.add, Value.sub, Value.mul, Value.div, Value.neg


def _number(x):
    """A number operand given as something else (a 1-element tensor as an option): its float,
    else PyTorch's TypeError."""
    try:
        return float(x)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"a fused optimizer update takes numbers and traced values, not {type(x).__name__}") from None
