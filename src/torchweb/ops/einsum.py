"""torch.einsum, lowered as PyTorch does without opt_einsum: each operand's repeated subscripts
become a diagonal view, subscripts of one operand only (and not in the output) are summed, then
the operands are combined pairwise left to right: an elementwise product where nothing is
contracted, else one bmm (batch = subscripts in both that are still needed, contracted = in both
and needed no more, the rest kept). Its gradient comes from those ops."""

from .operands import is_tensor
from .registry import define
from . import linalg as L, reduction as R, shape as S
from .layout import diagonal

_ELL = 52  # ellipsis dims get labels 52, 53, ... (right-aligned across operands)


def _letter(n):
    if n is Ellipsis:
        return "..."
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"einsum(): expected subscripts to be integers or Ellipsis, got {type(n).__name__}")
    if not 0 <= n < 52:
        raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
    return chr(ord("A") + n) if n < 26 else chr(ord("a") + n - 26)


def _from_sublists(args):
    """einsum(op0, sub0, op1, sub1, ..., [out]) -> (equation, operands)."""
    ops, subs = list(args[0::2]), list(args[1::2])
    out = None
    if len(ops) > len(subs):  # a trailing output sublist sits where an operand would be
        out = ops.pop()
    eq = ",".join("".join(_letter(n) for n in s) for s in subs)
    if out is not None:
        eq += "->" + "".join(_letter(n) for n in out)
    return eq, ops


def _label(c):
    return ord(c) - ord("A") if c <= "Z" else ord(c) - ord("a") + 26


def _parse(eq, nops):
    """-> (per operand: list of labels with None for the ellipsis, output labels or None when
    implicit, whether the output has an ellipsis)."""
    terms, cur, out, ell_seen, i = [], [], None, False, 0
    arrow = False
    while i < len(eq):
        c = eq[i]
        if c == " ":
            i += 1
            continue
        if c == ".":
            if ell_seen:
                raise RuntimeError(f"einsum(): found '.' for {'output' if arrow else f'operand {len(terms)}'} "
                                   f"for which an ellipsis was already found")
            if eq[i:i + 3] != "...":
                raise RuntimeError(f"einsum(): found '.' for {'output' if arrow else f'operand {len(terms)}'} "
                                   f"that is not part of any ellipsis")
            cur.append(None)
            ell_seen = True
            i += 3
            continue
        if c == "," and not arrow:
            terms.append(cur)
            cur, ell_seen = [], False
        elif c == "-" and not arrow and eq[i + 1:i + 2] == ">":
            terms.append(cur)
            cur, ell_seen, arrow = [], False, True
            i += 1
        elif c.isascii() and c.isalpha():
            cur.append(_label(c))
        else:
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, "
                               f"subscripts must be in [a-zA-Z]")
        i += 1
    if arrow:
        out = cur
    else:
        terms.append(cur)
    if len(terms) < nops:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    if len(terms) > nops:
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    return terms, out


def _name(label):
    return _letter(label) if label < _ELL else "..."


@define("einsum", "linalg", method=False)
def einsum(*args):
    """einsum(equation, *operands) -> Tensor

    Sums of products of the operands' elements over the subscripts of the equation (Einstein
    notation): 'ij,jk->ik' is a matrix product, 'ii' a trace, 'ii->i' a diagonal, 'i,j->ij' an
    outer product, '...' broadcast dims; without '->' the output is the ellipsis dims then the
    subscripts seen once, in order (upper case first). Also einsum(equation, [operands]) and the
    sublist form einsum(op0, [0, 1], op1, [1, 2], [0, 2])."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], str):
        eq, ops = args[0], list(args[1:])
        if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
            ops = list(ops[0])
    else:
        eq, ops = _from_sublists(args)
    for k, o in enumerate(ops):
        if not is_tensor(o):
            raise TypeError(f"expected Tensor as element {k} in argument 1, but got {type(o).__name__}")
    if not ops:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    terms, out = _parse(eq, len(ops))

    # expand each operand's ellipsis into labels 52.. (right-aligned: the last ellipsis dim of
    # every operand is the same label)
    n_ell = 0
    for k, (t, x) in enumerate(zip(terms, ops)):
        named = len([c for c in t if c is not None])
        if None in t:
            if named > x.dim():
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) is more "
                                   f"than the number of dimensions ({x.dim()}) for operand {k}")
            n_ell = max(n_ell, x.dim() - named)
        elif named != x.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) does not match "
                               f"the number of dimensions ({x.dim()}) for operand {k} and no ellipsis was given")
    labels = []
    for t, x in zip(terms, ops):
        ls = []
        for c in t:
            if c is None:
                e = x.dim() - (len(t) - 1)
                ls += list(range(_ELL + n_ell - e, _ELL + n_ell))
            else:
                ls.append(c)
        labels.append(ls)

    # sizes: repeated within an operand must match; across operands 1 broadcasts
    size = {}
    for k, (ls, x) in enumerate(zip(labels, ops)):
        seen = {}
        for d, l in enumerate(ls):
            n = x.shape[d]
            if l in seen and seen[l] != n:
                raise RuntimeError(f"einsum(): subscript {_name(l)} is repeated for operand {k} but the sizes "
                                   f"don't match, {n} != {seen[l]}")
            seen[l] = n
        for l, n in seen.items():
            prev = size.get(l)
            if prev is None or prev == 1:
                size[l] = n
            elif n != 1 and n != prev:
                if l >= _ELL:
                    raise RuntimeError(f"einsum(): dimension {l - _ELL} covered by ellipsis in operand {k} has "
                                       f"size {n} which does not broadcast with previously seen ellipsis with "
                                       f"size {prev} for the respective dimension")
                raise RuntimeError(f"einsum(): subscript {_name(l)} has size {n} for operand {k} which does not "
                                   f"broadcast with previously seen size {prev}")

    # the output's labels
    ell_labels = list(range(_ELL, _ELL + n_ell))
    if out is None:
        count = {}
        for ls in labels:
            for l in ls:
                count[l] = count.get(l, 0) + 1
        out_labels = ell_labels + sorted(l for l, c in count.items() if c == 1 and l < _ELL)
    else:
        out_labels, seen = [], set()
        for c in out:
            if c is None:
                out_labels += ell_labels
                continue
            if c in seen:
                raise RuntimeError(f"einsum(): output subscript {_letter(c)} appears more than once in the output")
            if c not in size:
                raise RuntimeError(f"einsum(): output subscript {_letter(c)} does not appear in the equation "
                                   f"for any input operand")
            seen.add(c)
            out_labels.append(c)

    # per operand: diagonals of repeated labels, then sums of labels nobody else needs
    xs = []
    for k, (ls, x) in enumerate(zip(labels, ops)):
        ls = list(ls)
        while len(set(ls)) != len(ls):
            first = {}
            for d, l in enumerate(ls):
                if l in first:
                    p = first[l]
                    x = diagonal(x, 0, p, d)
                    ls = [m for j, m in enumerate(ls) if j not in (p, d)] + [l]
                    break
                first[l] = d
        others = set(out_labels)
        for j, m in enumerate(labels):
            if j != k:
                others.update(m)
        dims = [d for d, l in enumerate(ls) if l not in others]
        if dims:
            x = R.sum(x, tuple(dims))
            ls = [l for l in ls if l in others]
        xs.append((x, ls))

    x, ls = xs[0]
    for k in range(1, len(xs)):
        keep = set(out_labels)
        for _, m in xs[k + 1:]:
            keep.update(m)
        x, ls = _pair(x, ls, xs[k][0], xs[k][1], keep)
    return S.permute(x, tuple(ls.index(l) for l in out_labels))


def _sum_labels(x, ls, drop):
    dims = tuple(d for d, l in enumerate(ls) if l in drop)
    if not dims:
        return x, ls
    return R.sum(x, dims), [l for l in ls if l not in drop]


def _pair(a, la, b, lb, keep):
    """The product of a (labels la) and b (labels lb), summed over the labels in both that are
    not in keep."""
    both = [l for l in la if l in lb]
    # labels of one side that nobody needs any more (not in the other, not kept): summed first
    a, la = _sum_labels(a, la, {l for l in la if l not in lb and l not in keep})
    b, lb = _sum_labels(b, lb, {l for l in lb if l not in la and l not in keep})
    contracted = [l for l in both if l not in keep]
    # a contracted label of size 1 on one side only: sum the other side over it (keeping the dim)
    for l in contracted:
        na, nb = a.shape[la.index(l)], b.shape[lb.index(l)]
        if na != nb:
            if na == 1:
                b = R.sum(b, lb.index(l), keepdim=True)
            else:
                a = R.sum(a, la.index(l), keepdim=True)
    if not contracted:  # an elementwise product, broadcast
        rest = [l for l in lb if l not in la]
        out = la + rest
        a2 = S.reshape(a, tuple(a.shape) + (1,) * len(rest))
        order = [lb.index(l) for l in out if l in lb]
        bp = S.permute(b, tuple(order))
        bshape = []
        it = iter(bp.shape)
        for l in out:
            bshape.append(next(it) if l in lb else 1)
        return a2 * S.reshape(bp, tuple(bshape)), out
    batch = [l for l in both if l in keep]
    left = [l for l in la if l not in lb]
    right = [l for l in lb if l not in la]

    def sz(t, ls, l):
        return t.shape[ls.index(l)]
    bsizes = [max(sz(a, la, l), sz(b, lb, l)) for l in batch]
    if any(sz(a, la, l) != n for l, n in zip(batch, bsizes)):
        a = S.expand(a, tuple(bsizes[batch.index(l)] if l in batch else n for l, n in zip(la, a.shape)))
    if any(sz(b, lb, l) != n for l, n in zip(batch, bsizes)):
        b = S.expand(b, tuple(bsizes[batch.index(l)] if l in batch else n for l, n in zip(lb, b.shape)))
    lsz = [sz(a, la, l) for l in left]
    rsz = [sz(b, lb, l) for l in right]
    ksz = [sz(a, la, l) for l in contracted]

    def prod(v):
        p = 1
        for s in v:
            p *= s
        return p
    A = S.reshape(S.permute(a, tuple(la.index(l) for l in batch + left + contracted)),
                  (prod(bsizes), prod(lsz), prod(ksz)))
    B = S.reshape(S.permute(b, tuple(lb.index(l) for l in batch + contracted + right)),
                  (prod(bsizes), prod(ksz), prod(rsz)))
    return S.reshape(L.bmm(A, B), tuple(bsizes + lsz + rsz)), batch + left + right
