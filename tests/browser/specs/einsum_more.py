"""Browser cases of einsum, the more linalg/layout ops (diag family, block_diag, cartesian_prod,
cross, cdist, trace, tensordot, inner, multi_dot, matrix norms, repeat_interleave with tensor
repeats) and the gamma/Bessel functions and torch.special names (ids em/)."""

import torch


def add_specs(R):
    case, method, rand, positive = R.case, R.method, R.rand, R.positive
    T = R.REDUCE_TOL
    # einsum
    case("em/einsum_mm", "einsum", "ij,jk->ik", rand(2, 3), rand(3, 4), grad=True, tol=T)
    case("em/einsum_attention", "einsum", "bhqd,bhkd->bhqk", rand(1, 2, 3, 4), rand(1, 2, 5, 4), grad=True, tol=T)
    case("em/einsum_trace", "einsum", "ii", rand(3, 3), grad=True, tol=T)
    case("em/einsum_diag", "einsum", "ii->i", rand(3, 3), grad=True)
    case("em/einsum_outer", "einsum", "i,j->ij", rand(2), rand(3), grad=True)
    case("em/einsum_ellipsis", "einsum", "...ij,...jk", rand(2, 1, 2, 3), rand(3, 3, 4), grad=True, tol=T)
    case("em/einsum_three", "einsum", "ij,jk,kl->il", rand(2, 3), rand(3, 4), rand(4, 2), grad=True, tol=T)
    case("em/einsum_list", "einsum", "ij,jk", [rand(2, 3), rand(3, 2)], tol=T)
    case("em/einsum_bad", "einsum", "ij,jk->ik", rand(2, 3), rand(2, 4), raises="RuntimeError")
    case("em/einsum_bad_char", "einsum", "i$", rand(2, 3), raises="RuntimeError")
    # diag family and layout
    case("em/diag_1d", "diag", rand(3), 1, grad=True)
    case("em/diag_2d", "diag", rand(3, 4), -1, grad=True)
    case("em/diag_embed", "diag_embed", rand(2, 3), 1, 0, 2, grad=True)
    case("em/diagflat", "diagflat", rand(2, 2), grad=True)
    case("em/diag_special", "diag", rand(4, special=R.SPECIAL))
    case("em/block_diag", "block_diag", rand(2, 3), rand(), rand(3), grad=True)
    case("em/cartesian_prod", "cartesian_prod", rand(2), rand(3), grad=True)
    case("em/repeat_interleave_t", "repeat_interleave", rand(3, 2), torch.tensor([1, 0, 3]), kwargs={"dim": 0},
         grad=True)
    case("em/diag_3d", "diag", rand(2, 2, 2), raises="RuntimeError")
    # products and distances
    case("em/cross", "cross", rand(2, 3), rand(2, 3), kwargs={"dim": 1}, grad=True)
    case("em/linalg_cross", "linalg.cross", rand(4, 3), rand(1, 3), grad=True)
    case("em/cdist", "cdist", rand(4, 3), rand(5, 3), grad=True, tol=T)
    case("em/cdist_p1", "cdist", rand(2, 3, 3), rand(2, 4, 3), 1.0, grad=True, tol=T)
    case("em/cdist_inf", "cdist", rand(3, 3), rand(2, 3), float("inf"), tol=T)
    case("em/cdist_mm", "cdist", rand(30, 3), rand(4, 3), tol=(1e-4, 1e-4))
    case("em/trace", "trace", rand(3, 4), grad=True, tol=T)
    case("em/tensordot", "tensordot", rand(2, 3, 4), rand(3, 4, 2), grad=True, tol=T)
    case("em/inner", "inner", rand(2, 3), rand(4, 3), grad=True, tol=T)
    case("em/vdot", "vdot", rand(5), rand(5), tol=T)
    case("em/multi_dot", "linalg.multi_dot", [rand(3), rand(3, 4), rand(4, 2)], tol=T)
    case("em/matrix_norm_1", "linalg.matrix_norm", rand(2, 3, 4), 1, grad=True, tol=T)
    case("em/matrix_norm_inf", "linalg.matrix_norm", rand(3, 4), float("inf"), tol=T)
    case("em/matrix_norm_fro", "linalg.matrix_norm", rand(3, 4), grad=True, tol=T)
    case("em/cdist_cols", "cdist", rand(2, 3), rand(2, 4), raises="RuntimeError")
    # gamma family, Bessel, torch.special
    x = torch.tensor([0.1, 0.5, 1.0, 1.5, 2.0, 3.7, 9.0, 25.0, -0.5, -2.5])
    tt = R.TRANSCENDENTAL_TOL
    case("em/lgamma", "lgamma", x, tol=tt)
    case("em/lgamma_poles", "lgamma", torch.tensor([0.0, -1.0, -2.0, float("inf"), float("-inf"), float("nan")]))
    case("em/digamma", "digamma", x, tol=tt)
    case("em/trigamma", "polygamma", 1, x, tol=tt)
    case("em/polygamma3", "polygamma", 3, positive(6), tol=tt)
    case("em/i0", "i0", torch.tensor([0.0, 0.5, -3.0, 8.0, 15.0, -40.0]), tol=tt)
    case("em/special_i1", "special.i1", torch.tensor([0.0, 0.5, -3.0, 8.0, 15.0, -40.0]), tol=tt)
    case("em/mvlgamma", "mvlgamma", positive(2, 3, lo=1.5, hi=5.0), 3, grad=True, tol=tt)
    case("em/lgamma_grad", "lgamma", positive(5), grad=True, tol=tt)
    case("em/digamma_grad", "digamma", positive(5), grad=True, tol=tt)
    case("em/i0_grad", "i0", rand(5), grad=True, tol=tt)
    case("em/special_expit", "special.expit", rand(5), grad=True, tol=tt)
    case("em/special_ndtr", "special.ndtr", rand(5), tol=tt)
    case("em/special_entr", "special.entr", torch.tensor([0.0, 0.5, 2.0, -1.0]), tol=tt)
    case("em/special_xlog1py", "special.xlog1py", rand(4), positive(4), tol=tt)
    case("em/polygamma_neg", "polygamma", -1, rand(3), raises="RuntimeError")
    method("em/polygamma_method", "polygamma", positive(4), 2, tol=tt)
