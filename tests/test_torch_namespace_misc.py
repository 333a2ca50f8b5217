"""torch.* names real code reaches besides the ops: ATen's forms of F ops (convolution,
grid_sampler, affine_grid_generator, in-place dropouts, frobenius_norm, norm_except_dim,
nonzero_static), control flow (cond, while_loop), introspection (typename, get_device, is_*),
autocast state, exception classes, against PyTorch."""

import pytest
import torch

import torchweb
from oracle import assert_close, ours


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=g) * 2 - 1


def test_convolution_forms(device):
    x, w, b = _rand(2, 3, 7, 7), _rand(4, 3, 3, 3, seed=1), _rand(4, seed=2)
    args = ([2, 1], [1, 0], [1, 1], False, [0, 0], 1)
    assert_close(torchweb.convolution(ours(x, device), ours(w, device), ours(b, device), *args),
                 torch.convolution(x, w, b, *args), rtol=1e-4, atol=1e-4)
    wt = _rand(3, 2, 3, 3, seed=3)
    args_t = ([2, 2], [1, 1], [1, 1], True, [1, 1], 1)
    assert_close(torchweb.convolution(ours(x, device), ours(wt, device), None, *args_t),
                 torch.convolution(x, wt, None, *args_t), rtol=1e-4, atol=1e-4)
    x1, w1 = _rand(2, 3, 9), _rand(5, 3, 2, seed=4)
    assert_close(torchweb.convolution(ours(x1, device), ours(w1, device), None, [1], [1], [2], False, [0], 1),
                 torch.convolution(x1, w1, None, [1], [1], [2], False, [0], 1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("padding", [0, 1, 2])
def test_grid_sampler_and_affine_grid_generator(device, mode, padding):
    x = _rand(2, 3, 5, 6)
    theta = torch.tensor([[[0.9, 0.1, 0.05], [-0.2, 1.1, 0.0]], [[1.0, 0.0, 0.3], [0.0, 0.7, -0.1]]])
    grid = torch.affine_grid_generator(theta, [2, 3, 4, 5], False)
    assert_close(torchweb.affine_grid_generator(ours(theta, device), [2, 3, 4, 5], False), grid)
    want = torch.grid_sampler(x, grid, mode, padding, False)
    assert_close(torchweb.grid_sampler(ours(x, device), ours(grid, device), mode, padding, False), want,
                 rtol=1e-4, atol=1e-4)
    assert_close(torchweb.grid_sampler_2d(ours(x, device), ours(grid, device), mode, padding, False),
                 torch.grid_sampler_2d(x, grid, mode, padding, False), rtol=1e-4, atol=1e-4)


def test_in_place_and_feature_dropouts(device):
    a = _rand(2, 3, 4)
    for name in ("dropout_", "feature_dropout_", "alpha_dropout_", "feature_alpha_dropout_"):
        x, t = ours(a, device), a.clone()
        r = getattr(torchweb, name)(x, 0.5, False)     # not training: the identity, in place
        assert r is x
        assert_close(x, getattr(torch, name)(t, 0.5, False))
    x = ours(a, device)
    torchweb.dropout_(x, 1.0, True)
    assert_close(x, torch.dropout_(a.clone(), 1.0, True))
    assert_close(torchweb.feature_dropout(ours(a, device), 0.0, True), torch.feature_dropout(a, 0.0, True))
    kept = torchweb.feature_dropout(ours(torch.ones(4, 64, 3), device), 0.5, True)
    # whole channels: each (n, c) row is all zero or all 2
    rows = kept.reshape(4 * 64, 3).tolist()
    assert all(r in ([0.0] * 3, [2.0] * 3) for r in rows)
    with pytest.raises(ValueError):
        torchweb.dropout_(ours(a, device), 1.5, True)


def test_frobenius_norm_and_norm_except_dim(device):
    a = _rand(3, 4, 5)
    x = ours(a, device)
    assert_close(torchweb.frobenius_norm(x, [1, 2]), torch.frobenius_norm(a, [1, 2]), rtol=1e-5, atol=1e-5)
    assert_close(torchweb.frobenius_norm(x, 0, True), torch.frobenius_norm(a, 0, True), rtol=1e-5, atol=1e-5)
    for dim in (0, 1, 2, -1):
        assert_close(torchweb.norm_except_dim(x, 2, dim), torch.norm_except_dim(a, 2, dim), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("size", [0, 2, 3, 6])
def test_nonzero_static(device, size):
    a = torch.tensor([[0, 1, 0], [2, 0, 3]])
    for fill in (-1, 7):
        assert_close(torchweb.nonzero_static(ours(a, device), size=size, fill_value=fill),
                     torch.nonzero_static(a, size=size, fill_value=fill))


def test_cond_and_while_loop(device):
    a = torch.tensor([1.0, 2.0])
    x = ours(a, device)
    for pred in (True, False, torch.tensor(True), torch.tensor(False)):
        ours_pred = torchweb.tensor(pred.item()) if isinstance(pred, torch.Tensor) else pred
        assert_close(torchweb.cond(ours_pred, lambda t: t * 2, lambda t: t - 1, (x,)),
                     torch.cond(pred, lambda t: t * 2, lambda t: t - 1, (a,)))
    got = torchweb.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * 2), (torchweb.tensor(0), x))
    want = torch._higher_order_ops.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * 2),
                                              (torch.tensor(0), a))
    assert_close(tuple(got), tuple(want))
    with pytest.raises(RuntimeError):
        torchweb.cond(torchweb.ones(2), lambda: 1, lambda: 0)


def test_introspection(device):
    x = torchweb.ones(2, device=device)
    assert torchweb.typename(x) == torch.typename(torch.ones(2))
    assert torchweb.typename(3) == torch.typename(3)
    assert torchweb.typename(torchweb.ones(2, dtype=torchweb.long)) == torch.typename(torch.ones(2, dtype=torch.long))
    assert torchweb.get_device(x) == (-1 if device == "cpu" else 0)
    assert torchweb.get_device(x) == x.get_device() if hasattr(x, "get_device") else True
    for name in ("is_complex", "is_conj", "is_neg", "is_inference", "is_distributed"):
        assert getattr(torchweb, name)(x) is getattr(torch, name)(torch.ones(2)), name
    assert torchweb.is_storage(x) is torch.is_storage(torch.ones(2))
    assert torchweb.is_inference_mode_enabled() is False
    with torchweb.inference_mode():
        assert torchweb.is_inference_mode_enabled() is True
        with torchweb.inference_mode(False):
            assert torchweb.is_inference_mode_enabled() is False
    assert torchweb.is_inference_mode_enabled() is False
    d = torchweb.detach(torchweb.ones(2, device=device, requires_grad=True) * 2)
    assert not d.requires_grad
    assert torchweb.get_device_module("webgpu") is torchweb.webgpu


def test_autocast_state_and_exceptions():
    assert torchweb.is_autocast_enabled("cuda") is torch.is_autocast_enabled("cuda")
    assert torchweb.is_autocast_cpu_enabled() is torch.is_autocast_cpu_enabled()
    assert str(torchweb.get_autocast_gpu_dtype()) == str(torch.get_autocast_gpu_dtype())
    torchweb.set_autocast_cache_enabled(False)
    assert torchweb.is_autocast_cache_enabled() is False
    torchweb.set_autocast_cache_enabled(True)
    assert issubclass(torchweb.OutOfMemoryError, RuntimeError) and issubclass(torchweb.AcceleratorError, RuntimeError)
    assert torchweb.GradScaler is torchweb.amp.GradScaler
    g = torchweb.default_generator
    g.manual_seed(5)
    assert g.initial_seed() == 5 == torchweb.initial_seed()
    assert torchweb.has_lapack is False and torchweb.has_spectral is False


def test_fx_wrap_is_a_no_op_and_tracing_is_refused():
    def stochastic_depth(x):
        return x
    assert torchweb.fx.wrap("stochastic_depth") == "stochastic_depth"
    assert torchweb.fx.wrap(stochastic_depth) is stochastic_depth
    assert not hasattr(torchweb.fx, "symbolic_trace")
    with pytest.raises(AttributeError, match="torch.fx.symbolic_trace is not supported by torchweb"):
        torchweb.fx.symbolic_trace


def test_tensorboard_and_export_are_refused_as_on_a_build_without_them():
    import importlib
    with pytest.raises(ImportError, match="tensorboard is not supported by torchweb"):
        importlib.import_module("torchweb.utils.tensorboard")
    for name in ("onnx",):
        assert not hasattr(torchweb, name)
        with pytest.raises(AttributeError, match=f"torch.{name} is not supported by torchweb"):
            getattr(torchweb, name)
    # torch.distributions and torch.func exist now (loaded on first use), as submodules too
    assert importlib.import_module("torchweb.distributions") is torchweb.distributions
    assert torchweb.distributions.Normal.__name__ == torch.distributions.Normal.__name__
    assert importlib.import_module("torchweb.func") is torchweb.func
    assert torchweb.vmap is torchweb.func.vmap


def test_from_file(tmp_path, device):
    path = tmp_path / "values.bin"
    a = torch.arange(10, dtype=torch.float32)
    a.numpy().tofile(path)
    assert_close(torchweb.from_file(str(path), size=6, dtype=torchweb.float32, device=device),
                 torch.from_file(str(path), size=6, dtype=torch.float32))
    assert_close(torchweb.from_file(str(path), False, 0), torch.from_file(str(path), False, 0))
    with pytest.raises(RuntimeError):
        torch.from_file(str(path), size=100, dtype=torch.float32)
    with pytest.raises(RuntimeError):
        torchweb.from_file(str(path), size=100, dtype=torchweb.float32)
    with pytest.raises(RuntimeError, match="shared=True"):
        torchweb.from_file(str(path), True, 2)


def test_complex128_exists_and_is_refused_when_used():
    for name in ("complex128", "cdouble"):
        d = getattr(torchweb, name)
        assert d != torchweb.float32
        with pytest.raises(TypeError, match="complex"):
            torchweb.zeros(2, dtype=d)
