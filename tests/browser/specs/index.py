"""Browser cases of gather/scatter, tensor indexing and masks (ops/index_ops.py, ops/indexing.py):
ids "index/...". Out-of-range indices in GPU tensors raise at the readback (replay reads)."""


def add_specs(R):
    case, method, rand, torch = R.case, R.method, R.rand, R.torch
    I64, BOOL = R.I64, R.BOOL
    T = torch.tensor
    tol = R.REDUCE_TOL

    def idx(*shape, hi):
        return rand(*shape, lo=0, hi=hi - 1, dtype=I64)

    # gather / take_along_dim / index_select / take
    case("index/gather_dim0", "gather", rand(4, 5), 0, idx(3, 5, hi=4), grad=True, tol=tol)
    case("index/gather_dim1_int32", "gather", rand(3, 4), 1, idx(3, 6, hi=4).int())
    case("index/gather_transposed", "gather", R.Viewed(rand(5, 4), ("t",)), 1, idx(4, 2, hi=5), grad=True, tol=tol)
    case("index/gather_int", "gather", rand(3, 4, lo=-9, hi=9, dtype=I64), 1, idx(3, 2, hi=4))
    case("index/gather_0d", "gather", rand(5), 0, T(3))
    case("index/gather_oob", "gather", rand(3, 4), 0, T([[0, 3]]), raises="RuntimeError")
    case("index/gather_negative", "gather", rand(3, 4), 0, T([[-1, 0]]), raises="RuntimeError")
    case("index/gather_float_index", "gather", rand(3, 4), 0, T([[0.0]]), raises="RuntimeError")
    case("index/take_along_dim", "take_along_dim", rand(3, 4), T([[2], [0], [-1]]), 1, grad=True, tol=tol)
    case("index/take_along_dim_flat", "take_along_dim", rand(3, 4), T([11, 0, 5]), grad=True, tol=tol)
    case("index/index_select", "index_select", rand(4, 5), 1, T([4, 0, 0]), grad=True, tol=tol)
    case("index/index_select_oob", "index_select", rand(4, 5), 0, T([4]), raises="IndexError")
    case("index/take", "take", rand(3, 4), T([[0, -1], [11, 5]]), grad=True, tol=tol)
    case("index/take_oob", "take", rand(3, 4), T([12]), raises="IndexError")
    # scatter family
    case("index/scatter_src", "scatter", rand(4, 3), 0, T([[3, 0, 1], [1, 2, 0]]), rand(2, 3), grad=True, tol=tol)
    case("index/scatter_value", "scatter", rand(3, 4), 1, T([[0, 3], [1, 1], [2, 0]]), 2.5)
    case("index/scatter_reduce_add", "scatter", rand(3, 4), 0, idx(4, 4, hi=3), rand(4, 4), kwargs={"reduce": "add"}, tol=tol)
    case("index/scatter_reduce_multiply", "scatter", rand(3, 4), 0, idx(4, 4, hi=3), rand(4, 4),
         kwargs={"reduce": "multiply"}, tol=tol)
    case("index/scatter_oob", "scatter", rand(3, 4), 0, T([[3]]), rand(1, 1), raises="RuntimeError")
    case("index/scatter_add", "scatter_add", rand(4, 3), 0, idx(6, 3, hi=4), rand(6, 3), grad=True, tol=tol)
    case("index/scatter_add_int", "scatter_add", rand(4, 3, lo=-9, hi=9, dtype=I64), 0, idx(6, 3, hi=4),
         rand(6, 3, lo=-9, hi=9, dtype=I64))
    case("index/scatter_add_bool", "scatter_add", rand(4, dtype=BOOL), 0, idx(6, hi=4), rand(6, dtype=BOOL))
    case("index/scatter_add_int64_past_int32", "scatter_add", T([2**31 - 1, 5]), 0, T([0, 0]), T([1, 1]),
         int64_past_int32=True)
    x = T([[1.0, 0.0, 2.0], [3.0, -1.0, 0.5], [2.0, 2.0, 0.0], [0.5, 4.0, 1.0]])
    s = T([[2.0, 0.0, 0.0], [1.0, 4.0, 0.0], [2.0, 4.0, 3.0]])
    i = T([[0, 1, 2], [0, 1, 2], [3, 1, 2]])
    for r in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            case(f"index/scatter_reduce_{r}_{'self' if inc else 'noself'}", "scatter_reduce", x, 0, i, s, r,
                 kwargs={"include_self": inc}, grad=True, tol=tol)
        case(f"index/scatter_reduce_{r}_int", "scatter_reduce", rand(4, 3, lo=-5, hi=5, dtype=I64), 0, i,
             rand(3, 3, lo=-5, hi=5, dtype=I64), r)
    case("index/scatter_reduce_nan", "scatter_reduce", T([1.0, R.NAN, 3.0]), 0, T([0, 0, 2]), T([R.NAN, 1.0, -R.INF]), "amax")
    # put, index_add/copy/fill
    case("index/put", "put", rand(3, 4), T([0, 5, -1]), rand(3), grad=True, tol=tol)
    case("index/put_accumulate", "put", rand(3, 4), T([0, 0, -1]), rand(3), kwargs={"accumulate": True}, grad=True, tol=tol)
    case("index/index_add", "index_add", rand(3, 4), 0, T([2, 2, 0]), rand(3, 4), kwargs={"alpha": 2.0}, grad=True, tol=tol)
    case("index/index_add_oob", "index_add", rand(3, 4), 0, T([3]), rand(1, 4), raises="RuntimeError")
    case("index/index_copy", "index_copy", rand(3, 4), 1, T([3, 0]), rand(3, 2), grad=True, tol=tol)
    case("index/index_fill", "index_fill", rand(3, 4), 1, T([3, -4]), -1.5, grad=True, tol=tol)
    case("index/index_fill_tensor", "index_fill", rand(3, 4), 0, T([1]), T(7.0), grad=True, tol=tol)
    # masks
    case("index/nonzero", "nonzero", T([[0.0, 1.0, -0.0], [R.NAN, 0.0, 2.0]]), strides=True)
    case("index/nonzero_int_3d", "nonzero", rand(3, 4, 2, lo=-1, hi=1, dtype=I64))
    case("index/nonzero_as_tuple", "nonzero", rand(3, 4, dtype=BOOL), kwargs={"as_tuple": True})
    case("index/nonzero_empty", "nonzero", rand(0, 3))
    case("index/nonzero_0d", "nonzero", T(2.0))
    case("index/argwhere", "argwhere", rand(4, 3, lo=-1, hi=1, dtype=I64))
    case("index/nonzero_large", "nonzero", R.Gen(70000, [700, 100]), check="sum")
    case("index/masked_select", "masked_select", rand(3, 4), rand(3, 4, dtype=BOOL), grad=True, tol=tol)
    case("index/masked_select_bcast", "masked_select", rand(4), rand(3, 4, dtype=BOOL), grad=True, tol=tol)
    case("index/masked_fill", "masked_fill", rand(3, 4), rand(4, dtype=BOOL), 2.5, grad=True, tol=tol)
    case("index/masked_fill_tensor", "masked_fill", rand(4), rand(3, 4, dtype=BOOL), T(-1.0), grad=True, tol=tol)
    case("index/masked_fill_int_mask", "masked_fill", rand(3), rand(3, lo=0, hi=1, dtype=I64), 1.0, raises="RuntimeError")
    case("index/masked_scatter", "masked_scatter", rand(3, 4), rand(3, 4, dtype=BOOL), rand(12), grad=True, tol=tol)
    case("index/masked_scatter_short", "masked_scatter", rand(3, 4), torch.ones(3, 4, dtype=BOOL), rand(5),
         raises="RuntimeError")
    # tensor indexing
    G = dict(style="getitem", grad=True, tol=tol)
    case("index/getitem_list", "getitem", rand(4, 3), [0, 0, 3], **G)
    case("index/getitem_tensor_2d", "getitem", rand(4, 3), T([[1, 0], [-1, 2]]), **G)
    case("index/getitem_separated", "getitem", rand(2, 3, 4), {"tuple": [[0, 1], {"slice": [None, None, None]}, [3, 0]]}, **G)
    case("index/getitem_adjacent", "getitem", rand(2, 3, 4), {"tuple": [{"slice": [None, None, None]}, [0, 2], [3, 0]]}, **G)
    case("index/getitem_int_and_list", "getitem", rand(2, 3, 4, 5),
         {"tuple": [{"slice": [None, None, None]}, 0, {"slice": [None, None, None]}, [0, 1]]}, **G)
    case("index/getitem_ellipsis_none", "getitem", rand(2, 3, 4),
         {"tuple": [None, {"ellipsis": True}, T([1, 0])]}, **G)
    case("index/getitem_broadcast", "getitem", rand(3, 4), {"tuple": [T([[0], [2]]), T([1, 3, 0])]}, **G)
    case("index/getitem_mask", "getitem", rand(3, 4), rand(3, 4, dtype=BOOL), **G)
    case("index/getitem_mask_rows", "getitem", rand(3, 4), T([True, False, True]), **G)
    case("index/getitem_slice_mask", "getitem", rand(3, 4), {"tuple": [{"slice": [1, None, None]}, T([True, False, False, True])]}, **G)
    case("index/getitem_oob", "getitem", rand(3, 4), T([3]), style="getitem", raises="IndexError")
    case("index/getitem_mask_shape", "getitem", rand(3, 4), T([True, False]), style="getitem", raises="IndexError")
    case("index/index_put", "index_put", rand(3, 4), {"tuple": [T([0, 2])]}, rand(4), grad=True, tol=tol)
    case("index/index_put_accumulate", "index_put", rand(3, 4), {"tuple": [T([0, 0, 2]), T([1, 1, 3])]}, rand(3),
         kwargs={"accumulate": True}, grad=True, tol=tol)
    case("index/index_put_mask", "index_put", rand(3, 4), {"tuple": [rand(3, 4, dtype=BOOL)]}, T(2.0), grad=True, tol=tol)
    case("index/index_put_dtype", "index_put", rand(3, 4), {"tuple": [T([0])]}, T([1, 2, 3, 4]), raises="RuntimeError")
    method("index/method_index_put_", "index_put_", rand(3, 4), {"tuple": [T([1])]}, rand(4))
    method("index/method_scatter_add_", "scatter_add_", rand(4, 3), 0, idx(5, 3, hi=4), rand(5, 3), tol=tol)
