"""Names the census found no test naming (in-place forms, aliases, switches), each called as
PyTorch's and compared with it on both devices: values, dtypes, and that in-place forms return
their input changed."""

import pytest
import torch

import torchweb
from oracle import assert_close, ours

POS = [0.3, 0.9, 1.7, 2.5, 0.05, 1.2]     # inside every domain below (acos/asin use HALF)
HALF = [0.1, -0.4, 0.7, -0.2, 0.5, 0.05]
INTS = [3, 12, 5, 0, 7, 9]
INTS2 = [1, 4, 6, 2, 3, 8]

# name -> (input values, dtype, extra arguments: a list whose tensors are given as lists)
UNARY_INPLACE = {
    "arcsinh_": POS, "arctan_": POS, "asinh_": POS, "atan_": POS, "ceil_": POS, "cosh_": POS,
    "deg2rad_": POS, "erfc_": POS, "exp2_": POS, "expm1_": POS, "frac_": POS, "i0_": POS,
    "rad2deg_": POS, "reciprocal_": POS, "rsqrt_": POS, "sinc_": POS, "sinh_": POS, "tan_": HALF,
    "trunc_": POS, "negative_": POS, "absolute_": HALF, "digamma_": POS, "erfinv_": HALF,
    "lgamma_": POS, "sign_": HALF, "nan_to_num_": POS, "selu_": HALF,
}
BINARY_INPLACE = ("arctan2_", "atan2_", "copysign_", "divide_", "eq_", "floor_divide_", "fmod_", "ge_",
                  "greater_", "greater_equal_", "gt_", "hypot_", "le_", "less_", "less_equal_", "lt_",
                  "multiply_", "ne_", "nextafter_", "not_equal_", "remainder_", "subtract_", "true_divide_")
BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor")
ALIASES = ("greater_equal", "less_equal", "not_equal", "subtract", "true_divide")


def _pair(device, a=POS, b=HALF, dtype=torch.float32):
    ta, tb = torch.tensor(a, dtype=dtype), torch.tensor(b, dtype=dtype)
    return ta, tb, ours(ta, device), ours(tb, device)


@pytest.mark.parametrize("name", sorted(UNARY_INPLACE))
def test_unary_in_place(device, name):
    t = torch.tensor(UNARY_INPLACE[name])
    x = ours(t, device)
    if hasattr(torch.Tensor, name):
        got, want = getattr(x, name)(), getattr(t.clone(), name)()
        assert got is x
        assert_close(got, want, rtol=1e-4, atol=1e-5)
    if hasattr(torch, name):   # the torch.<name>_ function form
        x2, t2 = ours(t, device), t.clone()
        assert_close(getattr(torchweb, name)(x2), getattr(torch, name)(t2), rtol=1e-4, atol=1e-5)
        assert_close(x2, t2, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", BINARY_INPLACE)
def test_binary_in_place(device, name):
    ta, tb, a, b = _pair(device, POS, [0.7, 0.9, -1.2, 2.5, 0.05, 3.0])
    got = getattr(a, name)(b)
    assert got is a
    assert_close(got, getattr(ta, name)(tb), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ALIASES)
def test_aliases(device, name):
    ta, tb, a, b = _pair(device, POS, [0.7, 0.9, -1.2, 2.5, 0.05, 3.0])
    assert_close(getattr(torchweb, name)(a, b), getattr(torch, name)(ta, tb))
    assert_close(getattr(a, name)(b), getattr(ta, name)(tb))
    if hasattr(torch.Tensor, name + "_"):
        assert_close(getattr(a, name + "_")(b), getattr(ta, name + "_")(tb))


@pytest.mark.parametrize("name", BITWISE)
def test_bitwise(device, name):
    ta, tb, a, b = _pair(device, INTS, INTS2, torch.int32)
    assert_close(getattr(torchweb, name)(a, b), getattr(torch, name)(ta, tb))
    assert_close(getattr(a, name)(b), getattr(ta, name)(tb))
    in_place = {"bitwise_and": "bitwise_and_", "bitwise_or": "bitwise_or_", "bitwise_xor": "bitwise_xor_"}[name]
    assert_close(getattr(a, in_place)(b), getattr(ta, in_place)(tb))
    assert_close(torchweb.bitwise_not(a), torch.bitwise_not(ta))
    assert_close(a.bitwise_not(), ta.bitwise_not())
    assert_close(a.bitwise_not_(), ta.bitwise_not_())
    assert_close(a.bitwise_left_shift_(1), ta.bitwise_left_shift_(1))


def test_tensor_blends_and_scans_in_place(device):
    ta, tb, a, b = _pair(device)
    tc, c = torch.tensor(INTS, dtype=torch.float32) + 1, ours(torch.tensor(INTS, dtype=torch.float32) + 1, device)
    assert_close(a.clone().addcdiv_(b, c, value=0.5), ta.clone().addcdiv_(tb, tc, value=0.5))
    assert_close(a.clone().addcmul_(b, c, value=2), ta.clone().addcmul_(tb, tc, value=2))
    assert_close(a.clone().cumsum_(0), ta.clone().cumsum_(0))
    assert_close(a.clone().cumprod_(0), ta.clone().cumprod_(0), rtol=1e-5, atol=1e-6)
    m, tm = ours(torch.arange(9.).reshape(3, 3), device), torch.arange(9.).reshape(3, 3)
    assert_close(m.clone().tril_(), tm.clone().tril_())
    for op in ("logical_and_", "logical_or_", "logical_xor_"):
        assert_close(getattr(a.clone(), op)(b), getattr(ta.clone(), op)(tb))
    assert_close(a.clone().logical_not_(), ta.clone().logical_not_())


def test_views_and_shapes(device):
    t = torch.arange(24.).reshape(2, 3, 4)
    x = ours(t, device)
    assert_close(torchweb.moveaxis(x, 0, 2), torch.moveaxis(t, 0, 2))
    assert_close(x.moveaxis(0, 2), t.moveaxis(0, 2))
    assert_close(torchweb.swapdims(x, 0, 1), torch.swapdims(t, 0, 1))
    assert_close(x.swapdims(0, 1), t.swapdims(0, 1))
    assert_close(x.reshape_as(ours(torch.zeros(4, 6), device)), t.reshape_as(torch.zeros(4, 6)))
    assert_close(x.sum_to_size(1, 3, 1), t.sum_to_size(1, 3, 1))
    assert x.ndimension() == t.ndimension()
    assert x.is_cpu == (device == "cpu")
    assert_close(torchweb.atleast_1d(ours(torch.tensor(3.), device)), torch.atleast_1d(torch.tensor(3.)))
    got = torchweb.broadcast_tensors(ours(torch.ones(3, 1), device), ours(torch.ones(1, 4), device))
    assert_close(got, torch.broadcast_tensors(torch.ones(3, 1), torch.ones(1, 4)))


def test_dtype_questions_and_switches():
    for a in (torch.float32, torch.int32, torch.bool, torch.int64):
        for b in (torch.float32, torch.int32, torch.bool, torch.uint8):
            ours_a, ours_b = getattr(torchweb, str(a)[6:]), getattr(torchweb, str(b)[6:])
            assert torchweb.can_cast(ours_a, ours_b) == torch.can_cast(a, b), (a, b)
    assert torchweb.get_num_interop_threads() >= 1
    torchweb.set_num_interop_threads(1)
    assert torchweb.init_num_threads() is None
    assert torchweb.is_vulkan_available() is False
    assert torchweb.compiled_with_cxx11_abi() is True
    assert torchweb.has_mkl is False and torchweb.has_openmp is False
    torchweb.set_warn_always(True)
    assert torchweb.is_warn_always_enabled() is True
    torchweb.set_warn_always(False)
    torchweb.use_deterministic_algorithms(True, warn_only=True)
    assert torchweb.is_deterministic_algorithms_warn_only_enabled() is True
    torchweb.use_deterministic_algorithms(False)
    # autocast's state: accepted and reported back, never on (regions keep their dtypes)
    torchweb.set_autocast_enabled("cuda", True)
    torchweb.set_autocast_cpu_enabled(True)
    assert torchweb.is_autocast_enabled("cuda") is False
    torchweb.set_autocast_dtype("cuda", torchweb.float16)
    assert torchweb.get_autocast_dtype("cuda") is torchweb.float16
    torchweb.set_autocast_gpu_dtype(torchweb.float16)
    torchweb.set_autocast_cpu_dtype(torchweb.float16)
    assert torchweb.get_autocast_cpu_dtype() is torchweb.float16
    assert torchweb.autocast_increment_nesting() == 1 and torchweb.autocast_decrement_nesting() == 0
    assert torchweb.clear_autocast_cache() is None


def test_grid_sampler_3d(device):
    g = torch.Generator().manual_seed(0)
    x = torch.rand(1, 2, 3, 4, 5, generator=g)
    grid = torch.rand(1, 2, 3, 4, 3, generator=g) * 2 - 1
    assert_close(torchweb.grid_sampler_3d(ours(x, device), ours(grid, device), 0, 0, False),
                 torch.grid_sampler_3d(x, grid, 0, 0, False), rtol=1e-4, atol=1e-5)


def test_lr_scheduler_base_and_nn_names():
    lr = torchweb.optim.lr_scheduler
    assert issubclass(lr.StepLR, lr.LRScheduler)
    assert lr.EPOCH_DEPRECATION_WARNING == torch.optim.lr_scheduler.EPOCH_DEPRECATION_WARNING
    nn = torchweb.nn
    assert issubclass(nn.RNN, nn.RNNBase) and issubclass(nn.LSTMCell, nn.RNNCellBase)
    assert isinstance(nn.Buffer(torchweb.ones(2)), torchweb.Tensor)


def test_bilinear_sync_batch_norm_lp_pool3d_selu_vecdot(device):
    g = torch.Generator().manual_seed(1)
    x1, x2 = torch.randn(4, 3, generator=g), torch.randn(4, 5, generator=g)
    theirs = torch.nn.Bilinear(3, 5, 2)
    mine = torchweb.nn.Bilinear(3, 5, 2).to(device)
    mine.load_state_dict({k: ours(v, device) for k, v in theirs.state_dict().items()})
    assert_close(mine(ours(x1, device), ours(x2, device)), theirs(x1, x2), rtol=1e-5, atol=1e-5)
    bn_t, bn = torch.nn.SyncBatchNorm(3), torchweb.nn.SyncBatchNorm(3).to(device)
    xb = torch.randn(4, 3, 5, generator=g)
    assert_close(bn(ours(xb, device)), bn_t(xb), rtol=1e-4, atol=1e-5)
    assert_close(bn.running_mean, bn_t.running_mean, rtol=1e-4, atol=1e-6)
    xp = torch.rand(1, 2, 4, 4, 4, generator=g)
    F, TF = torchweb.nn.functional, torch.nn.functional
    assert_close(F.lp_pool3d(ours(xp, device), 2, 2), TF.lp_pool3d(xp, 2, 2), rtol=1e-5, atol=1e-6)
    xs = torch.randn(6, generator=g)
    y = ours(xs, device)
    assert F.selu_(y) is y
    assert_close(y, TF.selu_(xs.clone()), rtol=1e-5, atol=1e-6)
    a, b = torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g)
    assert_close(torchweb.linalg.vecdot(ours(a, device), ours(b, device)), torch.linalg.vecdot(a, b),
                 rtol=1e-5, atol=1e-6)


def test_convert_sync_batchnorm(device):
    theirs = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 1), torch.nn.BatchNorm2d(3))
    mine = torchweb.nn.Sequential(torchweb.nn.Conv2d(2, 3, 1), torchweb.nn.BatchNorm2d(3)).to(device)
    mine.load_state_dict({k: ours(v, device) for k, v in theirs.state_dict().items()})
    theirs, mine = (torch.nn.SyncBatchNorm.convert_sync_batchnorm(theirs),
                    torchweb.nn.SyncBatchNorm.convert_sync_batchnorm(mine))
    assert type(mine[1]).__name__ == type(theirs[1]).__name__ == "SyncBatchNorm"
    assert list(mine.state_dict()) == list(theirs.state_dict())
    x = torch.randn(2, 2, 4, 4, generator=torch.Generator().manual_seed(3))
    assert_close(mine(ours(x, device)), theirs(x), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", BITWISE)
def test_bitwise_takes_a_number_as_input(device, name):
    for value in (3, True):
        want = getattr(torch, name)(6, torch.tensor(value))
        assert_close(getattr(torchweb, name)(6, torchweb.tensor(value, device=device)), want)
    with pytest.raises(NotImplementedError):   # PyTorch's refusal of a float operand
        getattr(torch, name)(6, torch.tensor(2.5))
    with pytest.raises(NotImplementedError):
        getattr(torchweb, name)(6, torchweb.tensor(2.5, device=device))
