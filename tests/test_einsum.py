"""torch.einsum against PyTorch, forward and backward: matrix ops, batch matmul, attention-like
contractions, traces, diagonals, outer products, ellipsis broadcasting, size-1 broadcasting,
three operands, scalars, the list and sublist forms, dtypes, empty and non-contiguous operands,
and PyTorch's exception types for malformed equations."""

import pytest
import torch

from oracle import check, make
from test_autograd_ops import run_case

EQS = {
    "mm": ("ij,jk->ik", [(2, 3), (3, 4)]),
    "mm_implicit": ("ij,jk", [(2, 3), (3, 4)]),
    "mv": ("ij,j->i", [(3, 4), (4,)]),
    "dot": ("i,i->", [(5,)], ),
    "transpose": ("ij->ji", [(2, 3)]),
    "sum_all": ("ijk->", [(2, 3, 4)]),
    "sum_dim": ("ijk->ik", [(2, 3, 4)]),
    "bmm": ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    "attention": ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    "attention_v": ("bhqk,bhkd->bhqd", [(1, 2, 3, 5), (1, 2, 5, 4)]),
    "trace": ("ii", [(3, 3)]),
    "trace_explicit": ("ii->", [(4, 4)]),
    "diag": ("ii->i", [(3, 3)]),
    "batch_diag": ("bii->bi", [(2, 3, 3)]),
    "diag_3": ("iii->i", [(3, 3, 3)]),
    "repeat_mixed": ("iij->ji", [(3, 3, 2)]),
    "outer": ("i,j->ij", [(2,), (3,)]),
    "outer_implicit": ("i,j", [(2,), (3,)]),
    "hadamard": ("ij,ij->ij", [(2, 3), (2, 3)]),
    "ellipsis_mm": ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 4)]),
    "ellipsis_implicit": ("...ij,...jk", [(2, 2, 3), (3, 4)]),
    "ellipsis_sum": ("i...->", [(2, 3, 4)]),
    "ellipsis_dropped": ("...ij->ij", [(5, 2, 3)]),
    "ellipsis_middle": ("i...j,j->i...", [(2, 3, 4, 5), (5,)]),
    "ellipsis_bcast": ("...i,...i->...", [(2, 1, 3), (4, 3)]),
    "three": ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    "three_bilinear": ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    "three_outer": ("i,j,k", [(2,), (3,), (2,)]),
    "uppercase": ("bA", [(2, 3)]),
    "upper_lower": ("Ij,jk->kI", [(2, 3), (3, 4)]),
    "scalars": (",", [(), ()]),
    "scalar_times": (",ij->ij", [(), (2, 3)]),
    "bcast_contracted": ("ij,jk->ik", [(2, 3), (1, 4)]),
    "bcast_batch": ("bij,bjk->bik", [(1, 2, 3), (3, 3, 2)]),
    "bcast_elementwise": ("ij,ij->ij", [(2, 1), (1, 4)]),
    "permuted_contract": ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    "spaces": (" i j , j k -> i k ", [(2, 3), (3, 4)]),
    "sum_one_operand_only": ("ij,k->i", [(2, 3), (4,)]),
    "tensor_contract": ("abc,cbd->ad", [(2, 3, 4), (4, 3, 2)]),
}


def _inputs(shapes):
    return [make(s) for s in shapes]


@pytest.mark.parametrize("name", EQS)
def test_forward(device, name):
    eq, shapes = EQS[name]
    if name == "dot":
        shapes = [(5,), (5,)]
    check(lambda m, *a: m.einsum(eq, *a), *_inputs(shapes), device=device, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["mm", "attention", "trace", "diag", "ellipsis_mm", "three", "outer",
                                  "bcast_contracted", "bcast_batch", "repeat_mixed", "sum_one_operand_only",
                                  "three_bilinear", "scalar_times", "ellipsis_sum"])
def test_backward(device, name):
    eq, shapes = EQS[name]
    run_case(device, lambda T, *a: T.einsum(eq, *a), lambda: tuple(torch.randn(s) for s in shapes))


def test_forms(device):
    a, b = make((2, 3)), make((3, 4))
    check(lambda m, x, y: m.einsum("ij,jk", [x, y]), a, b, device=device, rtol=1e-5, atol=1e-5)
    check(lambda m, x, y: m.einsum("ij,jk", (x, y)), a, b, device=device, rtol=1e-5, atol=1e-5)
    check(lambda m, x, y: m.einsum(x, [0, 1], y, [1, 2], [0, 2]), a, b, device=device, rtol=1e-5, atol=1e-5)
    check(lambda m, x, y: m.einsum(x, [0, 1], y, [1, 2]), a, b, device=device, rtol=1e-5, atol=1e-5)
    check(lambda m, x: m.einsum(x, [0, Ellipsis], [Ellipsis]), make((2, 3, 4)), device=device, rtol=1e-5)
    check(lambda m, x: m.einsum(x, [30, 1], [1, 30]), a, device=device)


def test_layouts_dtypes_empty(device):
    for layout in ("transposed", "strided"):
        check(lambda m, x, y: m.einsum("bij,bjk->bik", x, y), make((2, 3, 4)), make((2, 4, 3)), device=device,
              layout=layout, rtol=1e-5, atol=1e-5)
        check(lambda m, x: m.einsum("ii->i", x), make((3, 3)), device=device, layout=layout)
    check(lambda m, x, y: m.einsum("ij,jk->ik", x, y), make((2, 3), dtype=torch.int64),
          make((3, 4), dtype=torch.int64), device=device)
    check(lambda m, x: m.einsum("ij->", x), make((2, 3), dtype=torch.int32), device=device)
    check(lambda m, x: m.einsum("ij->j", x), make((2, 3), dtype=torch.bool), device=device)
    check(lambda m, x: m.einsum("ji", x), make((2, 3), dtype=torch.bool), device=device)
    check(lambda m, x, y: m.einsum("ij,jk", x, y), make((2, 0)), make((0, 3)), device=device)
    check(lambda m, x, y: m.einsum("ij,jk", x, y), make((0, 2)), make((2, 3)), device=device)
    check(lambda m, x: m.einsum("i", x), make((0,)), device=device)
    check(lambda m, x: m.einsum("...", x), make(()), device=device)


def test_view_semantics(device):
    """A permutation is a view of the operand, as in PyTorch."""
    import torchweb
    x = torchweb.zeros(2, 3, device=device)
    y = torchweb.einsum("ij->ji", x)
    assert y.shape == (3, 2)


BAD = {
    "repeat_size": ("ii", [(2, 3)]),
    "too_few_subs": ("i", [(2, 3)]),
    "too_many_subs": ("ij", [(2,)]),
    "ellipsis_too_many": ("ijk...", [(2, 3)]),
    "out_unknown": ("ij->kj", [(2, 2)]),
    "out_repeat": ("ij->ii", [(2, 2)]),
    "fewer_operands": ("i,j,k", [(2,), (3,)]),
    "more_operands": ("i", [(2,), (3,)]),
    "bad_char": ("i$", [(2, 3)]),
    "two_dots": ("i..j", [(2, 3)]),
    "double_ellipsis": ("......", [(2,)]),
    "two_arrows": ("ij->i->j", [(2, 2)]),
    "no_broadcast": ("ij,jk->ik", [(2, 3), (2, 4)]),
    "ellipsis_no_broadcast": ("...i,...i->...", [(2, 2, 3), (4, 3)]),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_input(device, name):
    eq, shapes = BAD[name]
    check(lambda m, *a: m.einsum(eq, *a), *_inputs(shapes), device=device)


def test_bad_arguments(device):
    check(lambda m, x: m.einsum("i", 3), make((2,)), device=device)
    check(lambda m, x: m.einsum("i"), make((2,)), device=device)
    check(lambda m, x, y: m.einsum("ij,jk", x, y), make((2, 3)), make((3, 4), dtype=torch.int64), device=device)
    check(lambda m, x: m.einsum(x, [0, 60]), make((2, 3)), device=device)


def test_large_grid(device):
    """A contraction whose bmm and sums cross the 65535-workgroup grid limit."""
    import torchweb
    from oracle import assert_close, fast_ours
    a, b = torch.randn(70000, 2), torch.randn(70000, 2)
    got = torchweb.einsum("ni,ni->n", fast_ours(a, device), fast_ours(b, device))
    assert_close(got, torch.einsum("ni,ni->n", a, b), rtol=1e-5, atol=1e-5)
