"""PyTorch's conjugate bit on complex tensors (_complex/conjugate.py), against PyTorch on both
devices: conj() is a lazy view (is_conj() True, sharing storage both ways), which view ops keep
and other ops resolve; resolve_conj/conj_physical materialize; view_as_real and numpy refuse a
conjugate view with PyTorch's messages; real tensors' forms; gradients through a conjugate view."""

import pytest
import torch
import torchweb

from complex_oracle import cours, cclose


def _z(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, dtype=torch.cfloat, generator=g)


FLAGS = {
    "conj": lambda lib, z: z.conj(),
    "conj_conj": lambda lib, z: z.conj().conj(),
    "torch_conj": lambda lib, z: lib.conj(z),
    "resolve": lambda lib, z: z.conj().resolve_conj(),
    "torch_resolve": lambda lib, z: lib.resolve_conj(z.conj()),
    "physical": lambda lib, z: z.conj_physical(),
    "physical_of_view": lambda lib, z: z.conj().conj_physical(),
    "reshape": lambda lib, z: z.conj().reshape(3, 2),
    "transpose": lambda lib, z: z.conj().transpose(0, 1),
    "t": lambda lib, z: z.conj().t(),
    "getitem": lambda lib, z: z.conj()[1:, 0],
    "select": lambda lib, z: z.conj().select(0, 1),
    "detach": lambda lib, z: z.conj().detach(),
    "unsqueeze": lambda lib, z: z.conj().unsqueeze(0),
    "chunk": lambda lib, z: z.conj().chunk(2, 1)[1],
    "unbind": lambda lib, z: z.conj().unbind(0)[0],
    "mH": lambda lib, z: z.mH,
    "H": lambda lib, z: z.H,
    "mH_of_view": lambda lib, z: z.conj().mH,
    "adjoint": lambda lib, z: z.adjoint(),
    "torch_adjoint_of_view": lambda lib, z: lib.adjoint(z.conj()),
    "clone": lambda lib, z: z.conj().clone(),
    "flip": lambda lib, z: z.conj().flip(0),
    "add": lambda lib, z: z.conj() + 1,
    "mul": lambda lib, z: z.conj() * z,
    "neg": lambda lib, z: -z.conj(),
    "cat": lambda lib, z: lib.cat([z.conj(), z]),
    "sum": lambda lib, z: z.conj().sum(0),
    "matmul": lambda lib, z: z.conj() @ z.mT,
    "abs": lambda lib, z: z.conj().abs(),
    "angle": lambda lib, z: z.conj().angle(),
    "real": lambda lib, z: z.conj().real,
    "imag": lambda lib, z: z.conj().imag,
    "fft": lambda lib, z: lib.fft.fft(z.conj()),
    "ihfft": lambda lib, z: lib.fft.ihfft(z.real.contiguous()),
    "ihfft2": lambda lib, z: lib.fft.ihfft2(z.real.contiguous()),
}


@pytest.mark.parametrize("case", sorted(FLAGS))
def test_values_and_bit_match(device, case):
    z = _z(2, 3)
    want = FLAGS[case](torch, z)
    got = FLAGS[case](torchweb, cours(z, device))
    cclose(got, want)
    if want.is_complex():
        assert got.is_conj() == want.is_conj() == torchweb.is_conj(got)


def test_the_view_shares_storage_both_ways(device):
    z = _z(2, 3)
    Z = cours(z, device)
    c, C = z.conj(), Z.conj()
    z[0, 1] = 5 + 1j
    Z[0, 1] = 5 + 1j
    cclose(C, c)                       # a later write to z is seen
    for name, arg in (("add_", 1j), ("mul_", 2 - 1j), ("sub_", 0.5), ("div_", 1 + 1j)):
        getattr(c, name)(arg)
        getattr(C, name)(arg)
        cclose(Z, z)                   # writes through the view land in z, conjugated
    c[1] = 3j
    C[1] = 3j
    cclose(Z, z)
    c.copy_(z * 2)
    C.copy_(Z * 2)
    cclose(Z, z)
    c.zero_()
    C.zero_()
    cclose(Z, z)
    assert C.is_conj() and C.conj().is_conj() is False


def test_refusals_match(device):
    z = _z(3)
    for fn in (lambda lib, t: lib.view_as_real(t.conj()), lambda lib, t: t.conj().numpy()):
        with pytest.raises(RuntimeError) as theirs:
            fn(torch, z)
        with pytest.raises(RuntimeError) as ours:
            fn(torchweb, cours(z, device))
        assert str(ours.value) == str(theirs.value)
    cclose(torchweb.view_as_real_copy(cours(z, device).conj()), torch.view_as_real_copy(z.conj()))


def test_real_tensors(device):
    x = torch.randn(3)
    X = cours(x, device)
    assert X.conj() is X and torchweb.conj(X) is X and X.resolve_conj() is X
    assert X.conj_physical() is X
    assert X.is_conj() is False and torchweb.is_conj(X) is False
    assert (x.conj() is x, x.conj_physical() is x, x.is_conj()) == (True, True, False)


def test_gradient_through_a_conjugate_view(device):
    z, w = _z(4), _z(4, seed=1)
    tz = z.clone().requires_grad_()
    (tz.conj() * w).real.sum().backward()
    Z = cours(z, device, True)
    c = Z.conj()
    assert c.is_conj() and c.requires_grad and not c.is_leaf
    (c * cours(w, device)).real.sum().backward()
    cclose(Z.grad, tz.grad)


def test_saved_conjugate_views_load_as_pytorch_does(device):
    """PyTorch saves a conjugate view as its storage and {"conj": True} (a negative one, such as
    conj().imag, with {"neg": True}): loaded, the same values (and the bit); torchweb's own
    saved view loads in PyTorch with its values."""
    import io
    z = _z(3)
    for saved in (z.conj(), z.conj().imag, z.conj()[1:]):
        buf = io.BytesIO()
        torch.save(saved, buf)
        buf.seek(0)
        got = torchweb.load(buf, map_location=device)
        cclose(got, saved)
        if saved.is_complex():
            assert got.is_conj() == saved.is_conj()
    buf = io.BytesIO()
    torchweb.save(cours(z, device).conj(), buf)
    buf.seek(0)
    cclose(torchweb.tensor(torch.load(buf).resolve_conj().tolist()), z.conj().resolve_conj())
