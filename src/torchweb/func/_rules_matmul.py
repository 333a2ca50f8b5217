"""Batching rules for products: matmul (and mm, bmm, mv, dot, @), outer, linear, addmm and
kin, einsum. A batched operand gets its batch dim first, padded to the other's rank so that
matmul's broadcasting lines the batch dims up; a 1-d operand becomes a matrix for the product
and loses that dim after, so every case is one batched matmul."""

from ._batched import to_front, wrap, BatchedTensor
from ._dispatch import rule
from ._rules_pointwise import padded


def _batched(t, lid):
    return type(t) is BatchedTensor and t._level == lid


@rule("matmul", "mm", "bmm", "mv", "dot", "__matmul__", "__rmatmul__", "vdot")
def _matmul(call):
    keys = list(call.bound.arguments)[:2]
    a, b = call.get(keys[0]), call.get(keys[1])
    if call.name == "__rmatmul__":
        a, b = b, a
    if call.get("out") is not None:
        return NotImplemented
    return matmul(a, b, call.lid)


def matmul(a, b, lid):
    a1, b1 = a.dim() == 1, b.dim() == 1
    rank = max(a.dim() + a1, b.dim() + b1)
    ops = []
    for t, one_d, axis in ((a, a1, -2), (b, b1, -1)):
        v, batched = to_front(t, lid)
        if one_d:
            v = v.unsqueeze(axis)
        ops.append(padded(v, rank, t.dim() + one_d) if batched else v)
    out = ops[0].matmul(ops[1])
    if b1:
        out = out.squeeze(-1)
    if a1:
        out = out.squeeze(-1 if b1 else -2)
    return wrap(out, 0, lid)


@rule("outer", "ger")
def _outer(call):
    a, b = list(call.bound.arguments.values())[:2]
    return a.unsqueeze(-1) * b.unsqueeze(-2)


@rule("linear")
def _linear(call):
    x, w, bias = call.get("input"), call.get("weight"), call.get("bias")
    lid = call.lid
    if not _batched(w, lid) and not _batched(bias, lid):
        v, batched = to_front(x, lid)
        return wrap(call.run(input=v), 0, lid) if batched else NotImplemented
    out = x.matmul(w.transpose(-1, -2) if w.dim() == 2 else w)
    return out if bias is None else out + bias


@rule("addmm", "addmv", "baddbmm", "addr")
def _add_product(call):
    names = list(call.bound.arguments)
    inp, m1, m2 = (call.get(k) for k in names[:3])
    if call.get("out") is not None:
        return NotImplemented
    beta, alpha = call.get("beta", 1), call.get("alpha", 1)
    prod = m1.unsqueeze(-1) * m2.unsqueeze(-2) if call.name == "addr" else m1.matmul(m2)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    return prod + (inp if beta == 1 else inp * beta)


@rule("einsum")
def _einsum(call):
    args = call.get("args")
    equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        return NotImplemented
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    inputs = lhs.split(",")
    if not arrow:      # implicit output: the letters seen once, sorted
        letters = [c for c in lhs if c.isalpha()]
        rhs = ("..." if "..." in lhs else "") + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    free = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in equation)
    new_ops, new_inputs = [], []
    for spec, t in zip(inputs, operands):
        v, batched = to_front(t, call.lid)
        new_ops.append(v)
        new_inputs.append(free + spec if batched else spec)
    return wrap(call.run(args=(",".join(new_inputs) + "->" + free + rhs,) + tuple(new_ops)), 0, call.lid)
