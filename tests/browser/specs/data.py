"""Browser cases of torchweb.utils.data's collation (ids "data/..."): default_collate and
default_convert called on batches of tensors, tuples, lists and Python ints/bools, the batch
landing on the page's default device (webgpu). What the case format can't hold is left to
tests/test_data.py: dict batches (a case's output is a tensor or a list of tensors), the
DataLoader itself (a case is one call, not building a dataset and iterating), and Python floats
(PyTorch collates them to float64, which WebGPU does not have: torchweb gives float32)."""


def add_specs(R):
    case, rand, torch = R.case, R.rand, R.torch
    collate, convert = "utils.data.default_collate", "utils.data.default_convert"
    T = lambda *items: {"tuple": list(items)}  # noqa: E731  (a tuple argument)
    case("data/collate_tensors", collate, [rand(2, 3), rand(2, 3), rand(2, 3)], grad=True)
    case("data/collate_0d", collate, [rand(), rand(), rand(), rand()])
    case("data/collate_int64", collate, [rand(4, lo=-9, hi=9, dtype=R.I64), rand(4, lo=-9, hi=9, dtype=R.I64)])
    case("data/collate_noncontiguous", collate, [R.Viewed(rand(3, 2), ("t",)), R.Viewed(rand(3, 2), ("t",))])
    case("data/collate_tuples", collate, [T(rand(3), torch.tensor(1)), T(rand(3), torch.tensor(0)),
                                          T(rand(3), torch.tensor(2))], grad=True)
    case("data/collate_ints", collate, [3, 1, 4, 1, 5])
    case("data/collate_bools", collate, [True, False, True])
    case("data/collate_lists", collate, [[0, 1], [2, 3], [4, 5]])
    case("data/collate_mixed_tuples", collate, [T(rand(2, 2), 7), T(rand(2, 2), 8)])
    case("data/convert_list", convert, [rand(3), rand(2)])
    case("data/collate_uneven", collate, [[1, 2], [3]], raises="RuntimeError")
    case("data/collate_bad_shapes", collate, [rand(2), rand(3)], raises="RuntimeError")
