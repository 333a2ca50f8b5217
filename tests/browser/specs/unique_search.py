"""Browser cases of searchsorted, bucketize, unique, unique_consecutive, bincount, histc and
histogram: ids "us/..."."""


def add_specs(R):
    case, method, rand = R.case, R.method, R.rand
    NAN, INF = R.NAN, R.INF
    torch = R.torch
    I64, I32 = R.I64, R.I32
    seq = torch.tensor([-1.5, -0.5, 0.0, 0.0, 1.0, 2.5])
    vals = torch.tensor([[-2.0, -0.5, 0.0, 0.7], [NAN, 2.5, 9.0, -0.0]])
    # searchsorted / bucketize
    case("us/searchsorted_left", "searchsorted", seq, vals)
    case("us/searchsorted_right", "searchsorted", seq, vals, kwargs={"right": True})
    case("us/searchsorted_side_int32", "searchsorted", seq, vals, kwargs={"side": "right", "out_int32": True})
    case("us/searchsorted_nan_seq", "searchsorted", torch.tensor([1.0, 2.0, NAN, NAN]),
         torch.tensor([NAN, 3.0, 1.5, INF]))
    case("us/searchsorted_batched", "searchsorted", torch.tensor([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]),
         torch.tensor([[3.0, 0.0], [4.5, 7.0]]))
    case("us/searchsorted_int", "searchsorted", torch.tensor([0, 2, 2, 5, 9]), rand(7, lo=-1, hi=10, dtype=I64))
    case("us/searchsorted_mixed", "searchsorted", torch.tensor([0, 2, 2, 5, 9]), torch.tensor([1.5, 2.0, 9.5]))
    case("us/searchsorted_sorter", "searchsorted", torch.tensor([3.0, 1.0, 2.0, 0.5]), torch.tensor([1.5, 0.0, 4.0]),
         kwargs={"sorter": torch.tensor([3, 1, 2, 0])})
    case("us/searchsorted_scalar", "searchsorted", seq, 0.25)
    case("us/searchsorted_empty_values", "searchsorted", seq, rand(0))
    case("us/searchsorted_len300", "searchsorted", torch.linspace(-3, 3, 300), rand(40, lo=-4, hi=4))
    case("us/searchsorted_transposed", "searchsorted", R.Viewed(torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), ("t",)),
         torch.tensor([[3.5, 0.0], [4.0, 9.0]]))
    case("us/searchsorted_bad_dims", "searchsorted", torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([1.0]),
         raises="RuntimeError")
    case("us/searchsorted_bad_side", "searchsorted", seq, vals, kwargs={"side": "middle"}, raises="RuntimeError")
    case("us/searchsorted_bad_sorter", "searchsorted", seq, vals, kwargs={"sorter": torch.tensor([0, 1])},
         raises="RuntimeError")
    case("us/bucketize", "bucketize", vals, torch.tensor([-1.0, 0.0, 2.0]))
    case("us/bucketize_right_int32", "bucketize", vals, torch.tensor([-1.0, 0.0, 2.0]),
         kwargs={"right": True, "out_int32": True})
    case("us/bucketize_0d", "bucketize", torch.tensor(0.5), torch.tensor([-1.0, 0.0, 2.0]))
    case("us/bucketize_2d_boundaries", "bucketize", vals, torch.tensor([[1.0, 2.0]]), raises="RuntimeError")
    # unique / unique_consecutive
    ties = torch.tensor([3.0, NAN, 1.0, -0.0, 3.0, 0.0, 1.0, 2.0, 1.0])
    case("us/unique", "unique", ties)
    case("us/unique_inverse_counts", "unique", ties, kwargs={"return_inverse": True, "return_counts": True})
    case("us/unique_2d_int", "unique", rand(4, 6, lo=0, hi=5, dtype=I64), kwargs={"return_inverse": True,
                                                                                  "return_counts": True})
    case("us/unique_len600", "unique", rand(600, lo=-20, hi=20, dtype=I32), kwargs={"return_counts": True})
    case("us/unique_bool", "unique", rand(9, dtype=R.BOOL), kwargs={"return_counts": True})
    case("us/unique_empty", "unique", rand(0), kwargs={"return_inverse": True, "return_counts": True})
    case("us/unique_0d", "unique", torch.tensor(2.0), kwargs={"return_inverse": True})
    case("us/unique_transposed", "unique", R.Viewed(rand(3, 4, lo=0, hi=3, dtype=I64), ("t",)),
         kwargs={"return_inverse": True})
    method("us/unique_method", "unique", torch.tensor([2, 1, 2, 5]), kwargs={"return_counts": True})
    case("us/unique_dim0", "unique", torch.tensor([[1, 2], [0, 5], [1, 2], [0, 4]]),
         kwargs={"dim": 0, "return_inverse": True, "return_counts": True})
    case("us/unique_dim1", "unique", torch.tensor([[1, 2, 1], [3, 0, 3]]),
         kwargs={"dim": 1, "return_inverse": True, "return_counts": True})
    case("us/unique_dim_bad", "unique", torch.tensor([[1, 2]]), kwargs={"dim": 2}, raises="IndexError")
    case("us/unique_consecutive", "unique_consecutive", torch.tensor([1.0, 1.0, NAN, NAN, -0.0, 0.0, 1.0]),
         kwargs={"return_inverse": True, "return_counts": True})
    case("us/unique_consecutive_dim", "unique_consecutive", torch.tensor([[1, 2], [1, 2], [3, 4], [1, 2]]),
         kwargs={"dim": 0, "return_inverse": True, "return_counts": True})
    method("us/unique_consecutive_method", "unique_consecutive", torch.tensor([4, 4, 2, 2, 2, 4]),
           kwargs={"return_counts": True})
    # bincount / histc / histogram
    idx = rand(30, lo=0, hi=6, dtype=I64)
    case("us/bincount", "bincount", idx)
    case("us/bincount_minlength", "bincount", idx, kwargs={"minlength": 10})
    case("us/bincount_weights", "bincount", idx, rand(30), tol=(1e-5, 1e-5))
    case("us/bincount_int32", "bincount", rand(12, lo=0, hi=3, dtype=I32))
    case("us/bincount_empty", "bincount", rand(0, dtype=I64), kwargs={"minlength": 3})
    method("us/bincount_method", "bincount", torch.tensor([0, 3, 3]))
    case("us/bincount_negative", "bincount", torch.tensor([1, -2]), raises="RuntimeError")
    case("us/bincount_2d", "bincount", torch.tensor([[1, 2]]), raises="RuntimeError")
    case("us/bincount_float", "bincount", torch.tensor([1.0]), raises="NotImplementedError")
    x = rand(40, lo=-3, hi=3)
    case("us/histc", "histc", x, kwargs={"bins": 6, "min": -2, "max": 2})
    case("us/histc_data_range", "histc", x, kwargs={"bins": 10})
    case("us/histc_edges_nan", "histc", torch.tensor([0.0, 1.0, 2.0, 3.0, NAN, -0.0, 4.0, -1.0]),
         kwargs={"bins": 3, "min": 0, "max": 3})
    case("us/histc_same", "histc", torch.tensor([2.0, 2.0]), kwargs={"bins": 4})
    method("us/histc_method", "histc", rand(3, 5), kwargs={"bins": 4})
    case("us/histc_int", "histc", torch.tensor([1, 2]), raises="NotImplementedError")
    case("us/histc_nan_range", "histc", torch.tensor([1.0, NAN]), raises="RuntimeError")
    case("us/histogram", "histogram", x, 5)
    case("us/histogram_range_weight", "histogram", x, 4,
         kwargs={"range": {"tuple": [-1.0, 1.5]}, "weight": rand(40, lo=0, hi=1)}, tol=(1e-5, 1e-5))
    case("us/histogram_edges_density", "histogram", x, torch.tensor([-3.0, -1.0, 0.0, 0.5, 3.0]),
         kwargs={"density": True}, tol=(1e-5, 1e-6))
