"""complex64 tensors (torchweb/_complex/, docs/complex.md) against PyTorch on both devices:
creation, views, arithmetic, reductions, matmul, printing, autograd and optimizers, refusals."""

import pytest
import torch
import torchweb

from complex_oracle import cours, cclose


def _z(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, dtype=torch.cfloat, generator=g)


def _x(*shape, seed=1):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# -- creation and representation --------------------------------------------------------------
def test_creation_and_dtype(device):
    z = torchweb.tensor([1 + 2j, 3.5 - 1j, 0j], device=device)
    assert z.dtype is torchweb.complex64 is torchweb.cfloat
    assert z.is_complex() and torchweb.is_complex(z) and not z.is_floating_point()
    assert z.tolist() == [1 + 2j, 3.5 - 1j, 0j]
    assert z.element_size() == 8 and z[1].item() == 3.5 - 1j
    cclose(torchweb.zeros(2, 3, dtype=torchweb.cfloat, device=device), torch.zeros(2, 3, dtype=torch.cfloat))
    cclose(torchweb.ones(2, dtype=torchweb.complex64, device=device), torch.ones(2, dtype=torch.complex64))
    cclose(torchweb.full((2,), 1 - 3j, device=device), torch.full((2,), 1 - 3j))
    cclose(torchweb.ones(3, device=device).to(torchweb.complex64), torch.ones(3).to(torch.complex64))
    cclose(torchweb.ones(3, device=device).cfloat(), torch.ones(3).cfloat())
    r = torchweb.randn(4000, dtype=torchweb.cfloat, device=device)
    # (PyTorch's complex normal: each part of variance 1/2)
    assert abs(r.real.var().item() - 0.5) < 0.05 and abs(r.imag.var().item() - 0.5) < 0.05
    cclose(torchweb.zeros_like(z), torch.zeros_like(torch.tensor([1 + 2j, 3.5 - 1j, 0j])))


def test_complex_polar_and_views_share_storage(device):
    re, im = _x(3, 4), _x(3, 4, seed=2)
    z = torchweb.complex(cours(re, device), cours(im, device))
    cclose(z, torch.complex(re, im))
    cclose(torchweb.polar(cours(re.abs(), device), cours(im, device)), torch.polar(re.abs(), im))
    r = torchweb.view_as_real(z)
    assert r.dtype is torchweb.float32 and tuple(r.shape) == (3, 4, 2) and r.stride() == (8, 2, 1)
    assert z.stride() == (4, 1)
    r[0, 0, 1] = 7.0          # a view: the complex tensor sees it
    assert z[0, 0].item().imag == 7.0
    z.real[1, 1] = -5.0       # .real is a view too
    assert z[1, 1].item().real == -5.0
    a = torchweb.zeros(2, 3, 2, device=device)
    c = torchweb.view_as_complex(a)
    c[1, 2] = 1 + 1j
    assert a[1, 2].tolist() == [1.0, 1.0]


def test_view_as_complex_errors_match(device):
    for bad in (torch.zeros(3, 3), torch.zeros(4, 2).t(), torch.zeros(3, 2, dtype=torch.int64)):
        with pytest.raises(RuntimeError) as theirs:
            torch.view_as_complex(bad)
        ours = torchweb.tensor(bad.tolist(), dtype=getattr(torchweb, str(bad.dtype)[6:]), device=device)
        if not bad.is_contiguous():
            ours = torchweb.zeros(4, 2, device=device).t()
        with pytest.raises(RuntimeError) as e:
            torchweb.view_as_complex(ours)
        assert str(theirs.value).split(",")[0][:30] == str(e.value).split(",")[0][:30]
    with pytest.raises(RuntimeError, match="view_as_real is only supported for complex tensors"):
        torchweb.view_as_real(torchweb.ones(2, device=device))


def test_printing_matches():
    for t in (torch.tensor([1 + 2j, 3.5 - 1j]), torch.tensor([[1 + 2j, 3 - 1j], [0j, -2.25 + 100j]]),
              torch.tensor(1 + 2j), torch.tensor([1e-5 + 2j, 1e6 - 1j]), torch.zeros(0, dtype=torch.cfloat),
              torch.tensor([0.5 - 0.25j, -1.5 + 0.125j])):
        assert repr(cours(t, "cpu").to("cpu")).replace(", device='cpu'", "") == repr(t)
    assert repr(cours(torch.tensor([1 + 2j]), "cpu").requires_grad_() * 2).replace(", device='cpu'", "") == \
        "tensor([2.+4.j], grad_fn=<MulBackward0>)".replace("MulBackward0", repr(
            (cours(torch.tensor([1 + 2j]), "cpu").requires_grad_() * 2).grad_fn.name())[1:-1])


# -- math -----------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_arithmetic_with_complex_real_and_numbers(device, op):
    a, b, x = _z(3, 4), _z(4, seed=3), _x(3, 4)
    A, B, X = cours(a, device), cours(b, device), cours(x, device)
    f = getattr(torch, op)
    g = getattr(torchweb, op)
    cclose(g(A, B), f(a, b))                  # broadcasting
    cclose(g(A, X), f(a, x))
    cclose(g(X, A), f(x, a))
    cclose(getattr(A, op)(B), getattr(a, op)(b))
    for n in (2, 0.5, 1.5 - 2j):
        cclose(g(A, n), f(a, n))
    dunder = {"add": "__add__", "sub": "__sub__", "mul": "__mul__", "div": "__truediv__"}[op]
    cclose(getattr(A, dunder)(1 + 1j), getattr(a, dunder)(1 + 1j))
    rdunder = dunder.replace("__", "__r", 1)
    cclose(getattr(A, rdunder)(3.0), getattr(a, rdunder)(3.0))
    py = {"add": lambda p, q: p + q, "sub": lambda p, q: p - q, "mul": lambda p, q: p * q,
          "div": lambda p, q: p / q}[op]
    cclose(py(X, A), py(x, a))   # a real tensor's operator defers to the complex tensor's


def test_unary_and_pow(device):
    a = _z(5, 3)
    A = cours(a, device)
    cclose(-A, -a)
    cclose(A.conj(), a.conj())
    cclose(A.abs(), a.abs())
    cclose(abs(A), abs(a))
    cclose(A.angle(), a.angle())
    cclose(A.exp(), a.exp(), rtol=1e-5, atol=1e-5)
    cclose(A ** 2, a ** 2, rtol=1e-5, atol=1e-5)
    cclose(A ** 0.5, a ** 0.5, rtol=1e-5, atol=1e-5)
    cclose(A.real, a.real)
    cclose(A.imag, a.imag)
    assert not A.is_conj() and A.resolve_conj() is A
    assert (A == A.clone()).all().item() and not (A != A.clone()).any().item()


def test_reductions_and_matmul(device):
    a, b, x = _z(2, 3, 4), _z(4, 5, seed=4), _x(5, 3)
    A, B, X = cours(a, device), cours(b, device), cours(x, device)
    cclose(A.sum(), a.sum(), atol=1e-5)
    cclose(A.sum(-1), a.sum(-1))
    cclose(A.sum((0, 2), keepdim=True), a.sum((0, 2), keepdim=True))
    cclose(torchweb.mean(A, 1), torch.mean(a, 1))
    cclose(A @ B, a @ b, atol=1e-5)
    cclose(torchweb.matmul(X.cfloat(), A[0]), torch.matmul(x.cfloat(), a[0]), atol=1e-5)
    cclose(X @ A[0], x.cfloat() @ a[0], atol=1e-5)   # (torchweb also takes real @ complex)
    cclose(A.mT, a.mT)
    cclose(A[0].H, a[0].H)


def test_shape_ops(device):
    a = _z(2, 3, 4)
    A = cours(a, device)
    cclose(A.reshape(6, 4), a.reshape(6, 4))
    cclose(A.view(3, 8), a.view(3, 8))
    cclose(A.permute(2, 0, 1), a.permute(2, 0, 1))
    cclose(A.transpose(0, -1), a.transpose(0, -1))
    cclose(A.unsqueeze(-1), a.unsqueeze(-1))
    cclose(A.unsqueeze(1).squeeze(), a.unsqueeze(1).squeeze())
    cclose(A.flatten(1), a.flatten(1))
    cclose(A[..., :-1], a[..., :-1])
    cclose(A[1, ::2], a[1, ::2])
    cclose(A[:, None, 1], a[:, None, 1])
    cclose(A.narrow(2, 1, 2), a.narrow(2, 1, 2))
    cclose(torchweb.cat([A, A[:1]]), torch.cat([a, a[:1]]))
    cclose(torchweb.stack([A, A], -1), torch.stack([a, a], -1))
    cclose(A.flip(1), a.flip(1))
    cclose(A.roll(1, 2), a.roll(1, 2))
    cclose(A.chunk(2, -1), a.chunk(2, -1))
    cclose(A.expand(2, 2, 3, 4), a.expand(2, 2, 3, 4))
    cclose(A.contiguous(), a.contiguous())
    other = "cpu" if device == "webgpu" else "webgpu"
    moved = A.to(other)
    assert moved.device.type == other and moved.dtype is torchweb.complex64
    cclose(moved, a)
    B = A.clone()
    B[0] = 1j
    b = a.clone()
    b[0] = 1j
    cclose(B, b)
    B.mul_(2 - 1j)
    b.mul_(2 - 1j)
    cclose(B, b)


def test_numpy_round_trip():
    import numpy as np
    a = np.array([[1 + 2j, -3j]], dtype=np.complex64)
    z = torchweb.tensor(a, device="cpu")
    assert z.dtype is torchweb.complex64 and np.array_equal(z.numpy(), a)


# -- autograd --------------------------------------------------------------------------------
def _grads(lib, a, b, device, fn):
    if lib is torch:
        za, zb = a.clone().requires_grad_(), b.clone().requires_grad_()
    else:
        za, zb = cours(a, device, True), cours(b, device, True)
    fn(lib, za, zb).backward()
    return za.grad, zb.grad


@pytest.mark.parametrize("case", ["abs_of_product", "real_of_quotient", "exp_angle", "matmul_abs2",
                                  "view_as_real", "polar"])
def test_gradients_follow_pytorch_convention(device, case):
    """For a real loss L, z.grad = dL/dRe + i dL/dIm, as PyTorch's."""
    fns = {
        "abs_of_product": lambda lib, z, w: (z * w).abs().sum(),
        "real_of_quotient": lambda lib, z, w: (z / w).real.sum() + (z - 2 * w).imag.pow(2).sum(),
        "exp_angle": lambda lib, z, w: (z.exp() * w.conj()).angle().sum(),
        "matmul_abs2": lambda lib, z, w: ((z.reshape(3, 4) @ w.reshape(4, 3)).abs() ** 2).mean(),
        "view_as_real": lambda lib, z, w: (lib.view_as_real(z * w) ** 2).sum(),
        "polar": lambda lib, z, w: lib.view_as_real(lib.polar(z.abs(), w.angle())).sum(),
    }
    a, b = _z(12), _z(12, seed=5)
    want = _grads(torch, a, b, device, fns[case])
    got = _grads(torchweb, a, b, device, fns[case])
    cclose(got, want, rtol=1e-4, atol=1e-5)


def test_gradient_through_view_as_complex(device):
    x = _x(4, 3, 2)
    tx = x.clone().requires_grad_()
    (torch.view_as_complex(tx) * (1 + 2j)).abs().sum().backward()
    wx = cours(x, device, True)
    (torchweb.view_as_complex(wx) * (1 + 2j)).abs().sum().backward()
    cclose(wx.grad, tx.grad)


@pytest.mark.parametrize("opt", ["SGD", "Adam"])
def test_complex_parameter_trains_as_pytorch(device, opt):
    w0, x0 = _z(3, 2), _z(4, 3, seed=6)
    kw = {"momentum": 0.9} if opt == "SGD" else {}
    losses = {}
    for lib in (torch, torchweb):
        p = lib.nn.Parameter(w0.clone() if lib is torch else cours(w0, device))
        assert isinstance(p, lib.nn.Parameter) and p.is_complex() and p.is_leaf
        x = x0 if lib is torch else cours(x0, device)
        o = getattr(lib.optim, opt)([p], lr=0.05, **kw)
        out = []
        for _ in range(4):
            o.zero_grad()
            loss = ((x @ p).abs() - 1.0).pow(2).sum()
            loss.backward()
            o.step()
            out.append(loss.item())
        losses[lib] = (out, p)
    assert losses[torchweb][0] == pytest.approx(losses[torch][0], rel=1e-5, abs=1e-6)
    cclose(losses[torchweb][1], losses[torch][1], rtol=1e-5, atol=1e-6)


# -- refusals --------------------------------------------------------------------------------
def test_unsupported_ops_name_the_op_and_complex(device):
    z = cours(_z(3), device)
    with pytest.raises(NotImplementedError, match="Tensor.sin is not implemented for complex"):
        z.sin()
    with pytest.raises(NotImplementedError, match="complex"):
        torchweb.sigmoid(z)
    with pytest.raises(NotImplementedError, match="Tensor.max is not implemented for complex"):
        z.max()
    with pytest.raises(TypeError, match="complex128"):
        torchweb.zeros(2, dtype=torchweb.complex128)
    with pytest.raises(RuntimeError, match="implicitly created only for real scalar outputs"):
        cours(_z(3), device, True).sum().backward()


def test_copies_of_the_views(device):
    a = _z(3, 2)
    A = cours(a, device)
    r = torchweb.view_as_real_copy(A)
    cclose(r, torch.view_as_real_copy(a))
    r[0, 0] = 100.0   # a copy: A unchanged
    cclose(A, a)
    x = _x(3, 2)
    cclose(torchweb.view_as_complex_copy(cours(x, device)), torch.view_as_complex_copy(x))


def test_save_and_load_both_ways(device):
    import io
    z = _z(3, 4)
    buf = io.BytesIO()
    torch.save({"z": z, "zt": z.t(), "row": z[1]}, buf)
    got = torchweb.load(io.BytesIO(buf.getvalue()), map_location=device)
    cclose(got["z"], z)
    cclose(got["zt"], z.t())
    cclose(got["row"], z[1])
    buf = io.BytesIO()
    torchweb.save({"z": got["z"], "col": got["z"][:, 2], "p": torchweb.nn.Parameter(got["z"])}, buf)
    back = torch.load(io.BytesIO(buf.getvalue()))
    assert torch.equal(back["z"], z) and torch.equal(back["col"], z[:, 2])
    assert isinstance(back["p"], torch.nn.Parameter) and torch.equal(back["p"].detach(), z)


def test_safetensors_c64_round_trip(device):
    import json
    import struct
    z = _z(2, 3)
    Z = cours(z, device)
    data = torchweb.safetensors.save({"z": Z, "x": torchweb.ones(2, device=device)})
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    assert header["z"]["dtype"] == "C64" and header["z"]["shape"] == [2, 3]
    b, e = header["z"]["data_offsets"]
    assert bytes(data[8 + n + b:8 + n + e]) == z.numpy().tobytes()   # complex64's own bytes
    back = torchweb.safetensors.load(data, device=device)
    cclose(back["z"], z)


def test_device_as_context_manager():
    """`with torch.device(d):` (llama2's init_weights makes its frequencies under it): factories
    inside make tensors on d, as PyTorch's; the default comes back after."""
    before = torchweb.get_default_device()
    with torchweb.device("cpu") as d:
        assert d == torchweb.device("cpu")
        assert torchweb.ones(2).device.type == "cpu"
        assert torchweb.polar(torchweb.ones(2), torchweb.zeros(2)).device.type == "cpu"
    assert torchweb.get_default_device() == before
    with torch.device("cpu"):
        assert torch.ones(2).device.type == "cpu"


def test_real_tensor_with_a_python_complex_number(device):
    x = _x(5)
    X = cours(x, device)
    cclose(X * 1j, x * 1j)
    cclose(2j * X, 2j * x)
    cclose(X + (1 - 1j), x + (1 - 1j))
    cclose(X - 0.5j, x - 0.5j)
    cclose(X / (1 + 1j), x / (1 + 1j))
    cclose((1j * X).exp(), (1j * x).exp())
