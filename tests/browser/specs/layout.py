"""Browser cases of the layout ops (issue 7): flips, roll, repeat/tile, triangles, diagonal,
products with beta/alpha, kron, meshgrid, atleast_*d, stacking."""


def add_specs(R):
    case, method, rand = R.case, R.method, R.rand
    x = rand(2, 3, 4)
    case("layout/flip", "flip", x, (0, 2), grad=True)
    case("layout/fliplr", "fliplr", rand(3, 4), grad=True)
    case("layout/rot90", "rot90", rand(3, 4), 1, (0, 1), grad=True)
    case("layout/roll", "roll", x, (2, -1), (1, 2), grad=True)
    case("layout/roll_flat", "roll", rand(3, 4), 5)
    method("layout/repeat", "repeat", rand(2, 3), 2, 1, 3, grad=True)
    case("layout/tile", "tile", rand(2, 3), (2, 2), grad=True)
    case("layout/repeat_interleave", "repeat_interleave", rand(2, 3), 2, kwargs={"dim": 1}, grad=True)
    case("layout/tril", "tril", rand(4, 5), -1, grad=True)
    case("layout/triu", "triu", rand(2, 4, 5), 1, grad=True)
    case("layout/diagonal", "diagonal", x, 1, 1, 2, grad=True)
    case("layout/outer", "outer", rand(3), rand(4), grad=True)
    case("layout/addmv", "addmv", rand(3), rand(3, 4), rand(4), kwargs={"beta": 0.5, "alpha": 2.0}, grad=True,
         tol=R.REDUCE_TOL)
    case("layout/baddbmm", "baddbmm", rand(3, 5), rand(2, 3, 4), rand(2, 4, 5), grad=True, tol=R.REDUCE_TOL)
    case("layout/addbmm", "addbmm", rand(3, 5), rand(2, 3, 4), rand(2, 4, 5), grad=True, tol=R.REDUCE_TOL)
    case("layout/kron", "kron", rand(2, 3), rand(2, 2), grad=True)
    case("layout/meshgrid_xy", "meshgrid", rand(2), rand(3), kwargs={"indexing": "xy"}, grad=True)
    case("layout/atleast_3d", "atleast_3d", rand(4))
    case("layout/column_stack", "column_stack", [rand(3), rand(3, 2)])
    case("layout/dstack", "dstack", [rand(2, 3), rand(2, 3)])
    case("layout/flip_dup", "flip", x, (0, 0), raises="RuntimeError")
    case("layout/tril_1d", "tril", rand(3), raises="RuntimeError")
