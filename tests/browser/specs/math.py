"""Browser cases of the math ops (issue 7): trigonometric, hyperbolic and special functions,
binary math rows, logit/heaviside, the blends and the activations (forward and gradients)."""


def add_specs(R):
    case, method, rand, positive = R.case, R.method, R.rand, R.positive
    torch = R.torch
    NAN, INF = R.NAN, R.INF
    T = R.TRANSCENDENTAL_TOL
    special = torch.tensor([NAN, INF, -INF, 0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 3.0])
    unary = {
        "tan": lambda: rand(2, 3, lo=-1.4, hi=1.4), "asin": lambda: rand(2, 3, lo=-0.95, hi=0.95),
        "acos": lambda: rand(2, 3, lo=-0.95, hi=0.95), "atan": lambda: rand(2, 3, lo=-5, hi=5),
        "sinh": lambda: rand(2, 3, lo=-4, hi=4), "cosh": lambda: rand(2, 3, lo=-4, hi=4),
        "asinh": lambda: rand(2, 3, lo=-5, hi=5), "acosh": lambda: positive(2, 3, lo=1.1, hi=5),
        "atanh": lambda: rand(2, 3, lo=-0.9, hi=0.9), "erfc": lambda: rand(2, 3, lo=-3, hi=3),
        "erfinv": lambda: rand(2, 3, lo=-0.95, hi=0.95), "sinc": lambda: rand(2, 3, lo=-3, hi=3),
        "deg2rad": lambda: rand(2, 3, lo=-90, hi=90), "rad2deg": lambda: rand(2, 3), "frac": lambda: rand(2, 3, lo=-5, hi=5),
        "logit": lambda: positive(2, 3, lo=0.05, hi=0.95),
    }
    for op, make in unary.items():
        case(f"math/{op}/basic", op, make(), tol=T, grad=True)
        case(f"math/{op}/special", op, special, tol=T)
    method("math/tan/method", "tan", rand(4), tol=T)
    case("math/tan/large", "tan", torch.tensor([1e4, -3e7, 1e30, 252.89820861816406, 1.5707964]), tol=(2e-6, 1e-30))
    case("math/sinh/large", "sinh", torch.tensor([80.0, -85.0, 1e-6, -1e-20]), tol=T)
    case("math/asinh/huge", "asinh", torch.tensor([1e30, -3e38, 1e-30, 2.5]), tol=T)
    case("math/acosh/huge", "acosh", torch.tensor([1e30, 3e38, 1.0000001, 1.5]), tol=T)
    case("math/erfc/tail", "erfc", torch.tensor([5.0, 8.0, 9.0, -6.0, 0.6]), tol=(1e-5, 1e-37))
    case("math/erfinv/edges", "erfinv", torch.tensor([0.999999, -0.9999, 1.0, -1.0, 1.5, 0.0]), tol=T)
    case("math/arcsin/alias", "arcsin", rand(4, lo=-0.9, hi=0.9), tol=T)
    case("math/arctan2/alias", "arctan2", rand(4), rand(4), tol=T)
    case("math/atan2/int", "atan2", torch.tensor([1, -2, 0]), torch.tensor([0, 3, -1]), tol=T)
    case("math/logit/eps", "logit", torch.tensor([0.0, 0.05, 0.5, 1.0]), 0.1, tol=T, grad=True)
    binary = {"atan2": (rand(2, 3), rand(3)), "hypot": (rand(2, 3), rand(3)), "copysign": (rand(2, 3), rand(3)),
              "xlogy": (rand(2, 3), positive(3)), "logaddexp": (rand(2, 3), rand(3)),
              "logaddexp2": (rand(2, 3), rand(3)), "fmax": (rand(2, 3), rand(3)), "fmin": (rand(2, 3), rand(3))}
    for op, (a, b) in binary.items():
        case(f"math/{op}/bcast", op, a, b, tol=T, grad=True)
        case(f"math/{op}/special", op, special, special.flip(0), tol=T)
    case("math/nextafter", "nextafter", torch.tensor([1.0, 1.0, 0.0, -2.0]), torch.tensor([2.0, 0.0, -1.0, -2.0]), tol=(5e-8, 1e-46))
    case("math/heaviside", "heaviside", torch.tensor([NAN, 0.0, -1.0, 2.0]), torch.tensor([0.5, 0.5, 0.5, 0.5]))
    case("math/heaviside/dtypes", "heaviside", torch.tensor([1.0]), torch.tensor([1]), raises="RuntimeError")
    case("math/signbit", "signbit", torch.tensor([-0.0, 0.0, -1.0, NAN, -INF]))
    case("math/sgn", "sgn", torch.tensor([-0.0, 2.0, -1.0, NAN]))
    case("math/frac/int", "frac", torch.tensor([1, 2]), raises="NotImplementedError")
    case("math/lerp/scalar", "lerp", rand(2, 3), rand(3), 0.3, grad=True)
    case("math/lerp/tensor", "lerp", rand(2, 3), rand(2, 3), rand(2, 3, lo=0, hi=1), grad=True)
    case("math/addcmul", "addcmul", rand(2, 3), rand(3), rand(2, 1), kwargs={"value": 0.5}, grad=True)
    case("math/addcdiv", "addcdiv", rand(2, 3), rand(3), positive(2, 1), kwargs={"value": -2.0}, grad=True)
    F = "nn.functional."
    acts = {"softplus": {}, "mish": {}, "elu": {"alpha": 0.5}, "selu": {}, "celu": {"alpha": 2.0},
            "leaky_relu": {"negative_slope": 0.2}, "hardtanh": {}, "relu6": {}, "hardswish": {}, "hardsigmoid": {},
            "softsign": {}, "tanhshrink": {}, "softshrink": {}, "hardshrink": {}, "logsigmoid": {}, "rrelu": {}}
    for op, kw in acts.items():
        case(f"math/F.{op}/basic", F + op, rand(3, 4, lo=-7, hi=7), kwargs=kw, tol=T, grad=True)
    case("math/F.softplus/beta", F + "softplus", rand(3, 4, lo=-7, hi=7), kwargs={"beta": 2.0, "threshold": 5.0}, tol=T, grad=True)
    case("math/F.threshold", F + "threshold", rand(3, 4), 0.5, -2.0, grad=True)
    case("math/F.glu", F + "glu", rand(3, 4), grad=True, tol=T)
    case("math/F.prelu", F + "prelu", rand(2, 3, 4), torch.tensor([0.1, -0.2, 0.3]), grad=True)
    case("math/F.softmin", F + "softmin", rand(3, 4), kwargs={"dim": 1}, grad=True, tol=T)
    case("math/F.softshrink/neg", F + "softshrink", rand(3), -1.0, raises="RuntimeError")
    case("math/F.glu/odd", F + "glu", rand(3, 3), raises="RuntimeError")
