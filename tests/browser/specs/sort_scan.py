"""Browser cases of the scans (cumsum, cumprod, cummax, cummin, logcumsumexp) and sorting (sort,
argsort, msort, topk, kthvalue, median, nanmedian, mode): ids "ss/..."."""


def add_specs(R):
    case, method, rand, distinct = R.case, R.method, R.rand, R.distinct
    NAN, INF = R.NAN, R.INF
    torch = R.torch
    tol = R.REDUCE_TOL
    # scans
    for n in (1, 255, 256, 257, 1025):
        case(f"ss/cumsum_len{n}", "cumsum", rand(2, n), 1, tol=(1e-4, 1e-3))
    case("ss/cumsum_len5000_split", "cumsum", rand(5000), 0, tol=(1e-4, 2e-3))
    case("ss/cumsum_grad", "cumsum", rand(3, 4), 1, grad=True, tol=tol)
    case("ss/cumsum_dim0_grad", "cumsum", rand(4, 3), 0, grad=True, tol=tol)
    case("ss/cumsum_empty", "cumsum", rand(0, 3), 1)
    case("ss/cumsum_0d", "cumsum", rand(), 0)
    case("ss/cumsum_int", "cumsum", rand(3, 5, lo=-9, hi=9, dtype=R.I64), 1)
    case("ss/cumsum_bool", "cumsum", rand(2, 6, dtype=R.BOOL), 1)
    case("ss/cumsum_dtype", "cumsum", rand(3, 5, lo=-9, hi=9, dtype=R.I64), 1, kwargs={"dtype": {"dtype": "float32"}})
    case("ss/cumsum_transposed", "cumsum", R.Viewed(rand(4, 6), ("t",)), 1, grad=True, tol=tol)
    case("ss/cumsum_int64_past_int32", "cumsum", torch.tensor([2**31 - 1, 2**31 - 1, -5]), 0,
         int64_past_int32=True)
    case("ss/cumprod_grad", "cumprod", rand(3, 5, lo=0.5, hi=1.5), 1, grad=True, tol=tol)
    case("ss/cumprod_zeros_grad", "cumprod", torch.tensor([[1.5, 0.0, 2.0, 0.0, 3.0], [0.5, 2.0, 0.0, 1.0, 2.0]]),
         1, grad=True, tol=tol)
    case("ss/cumprod_int", "cumprod", rand(2, 5, lo=-3, hi=3, dtype=R.I64), 1)
    method("ss/cumsum_method", "cumsum", rand(2, 3), 0)
    for op in ("cummax", "cummin"):
        case(f"ss/{op}_grad", op, distinct(3, 5), 1, grad=True)
        case(f"ss/{op}_ties_nan", op, torch.tensor([1.0, 3.0, 3.0, NAN, 2.0, NAN, 5.0, -0.0, 0.0]), 0)
        case(f"ss/{op}_int", op, rand(3, 6, lo=-4, hi=4, dtype=R.I64), 1)
        case(f"ss/{op}_len1025", op, rand(1025), 0)
    case("ss/logcumsumexp_grad", "logcumsumexp", rand(3, 6, lo=-5, hi=5), 1, grad=True, tol=R.TRANSCENDENTAL_TOL)
    case("ss/logcumsumexp_inf", "logcumsumexp", torch.tensor([INF, -INF, 1.0, -INF, NAN]), 0,
         tol=R.TRANSCENDENTAL_TOL)
    # (rows past the 65535-workgroup grid: tier 1 on lavapipe; one workgroup per row takes
    # minutes on SwiftShader, and the large/ cases already cross the grid in the browser)
    # sorting
    for n in (1, 255, 256, 257, 1025, 5000):
        case(f"ss/sort_len{n}", "sort", rand(2, n) if n < 5000 else rand(n), kwargs={"dim": -1, "stable": True})
    case("ss/sort_descending_ties_nan", "sort",
         torch.tensor([2.0, NAN, -0.0, 1.0, 0.0, 2.0, NAN, -INF, 1.0]), kwargs={"descending": True, "stable": True})
    case("ss/sort_ascending_ties_nan", "sort",
         torch.tensor([2.0, NAN, -0.0, 1.0, 0.0, 2.0, NAN, -INF, 1.0]), kwargs={"stable": True})
    case("ss/sort_grad", "sort", distinct(3, 5), 1, grad=True)
    case("ss/sort_int", "sort", rand(3, 7, lo=-3, hi=3, dtype=R.I64), kwargs={"dim": 1, "stable": True})
    case("ss/sort_bool", "sort", rand(2, 9, dtype=R.BOOL), kwargs={"dim": 1, "stable": True})
    case("ss/sort_empty", "sort", rand(0, 4), 1)
    case("ss/sort_0d", "sort", rand())
    case("ss/sort_transposed", "sort", R.Viewed(rand(4, 6), ("t",)), 1, kwargs={"descending": True})
    case("ss/argsort", "argsort", rand(3, 9, lo=-2, hi=2), kwargs={"dim": 1, "stable": True})
    case("ss/argsort_long", "argsort", rand(3000), kwargs={"stable": True, "descending": True})
    case("ss/msort_grad", "msort", distinct(4, 3), grad=True)
    case("ss/topk_grad", "topk", distinct(3, 8), 3, grad=True)
    case("ss/topk_smallest", "topk", distinct(3, 8), 2, 1, False)
    case("ss/topk_k_too_big", "topk", rand(3), 4, raises="RuntimeError")
    case("ss/kthvalue_grad", "kthvalue", distinct(3, 7), 4, 1, grad=True)
    case("ss/kthvalue_keepdim", "kthvalue", distinct(5, 3), 2, 0, True)
    case("ss/kthvalue_k0", "kthvalue", rand(3), 0, raises="RuntimeError")
    case("ss/median_all_grad", "median", distinct(3, 4), grad=True)
    case("ss/median_dim_grad", "median", distinct(3, 6), 1, grad=True)
    case("ss/median_nan", "median", torch.tensor([[3.0, NAN, 1.0, NAN, 2.0], [NAN, NAN, NAN, NAN, NAN],
                                                  [1.0, 2.0, 3.0, 4.0, 5.0]]), 1)
    case("ss/nanmedian_nan", "nanmedian", torch.tensor([[3.0, NAN, 1.0, NAN, 2.0], [NAN, NAN, NAN, NAN, NAN],
                                                        [1.0, 2.0, 3.0, 4.0, 5.0]]), 1)
    case("ss/nanmedian_all", "nanmedian", torch.tensor([3.0, NAN, 1.0, 2.0]))
    case("ss/median_empty_dim", "median", rand(2, 0), 1, raises="IndexError")
    case("ss/mode", "mode", torch.tensor([[1.0, 2.0, 2.0, 1.0, 3.0], [7.0, 6.0, 5.0, 4.0, 3.0]]), 1)
    case("ss/mode_grad", "mode", distinct(3, 4), 1, grad=True)
