"""Tensor methods that are not computations (issue 18): type_as, backend flags, get_device,
layout and memory formats, itemsize/nbytes, data_ptr and storages, set_, resize_, new,
in-place view ops, H/mT/mH, the complex API on real tensors, device and dtype methods,
apply_/map_/map2_, random_, register_post_accumulate_grad_hook: compared with PyTorch."""

import math
import warnings

import pytest
import torch

import torchweb
from oracle import assert_close, ours, theirs


def _pair(shape=(2, 3, 4), device="cpu", requires_grad=False):
    t = torch.randn(*shape, generator=torch.Generator().manual_seed(7))
    return t.requires_grad_(requires_grad), ours(t, device, requires_grad)


# -- flags and metadata -------------------------------------------------------------------------
FLAGS = ("is_xpu", "is_mps", "is_meta", "is_mkldnn", "is_vulkan", "is_xla", "is_ipu", "is_maia",
         "is_mtia", "is_quantized", "is_nested", "is_sparse_csr")
FLAG_METHODS = ("is_pinned", "is_shared", "is_inference", "is_conj", "is_neg", "is_distributed")


def test_flags_are_properties_or_methods_as_in_pytorch(device):
    t, x = _pair(device=device)
    for name in FLAGS:
        assert isinstance(getattr(torch.Tensor, name), type(torch.Tensor.is_cuda)), name
        assert isinstance(getattr(torchweb.Tensor, name), property), name
        assert getattr(x, name) is False and getattr(t, name) is False
    assert x.is_sparse is False and t.is_sparse is False   # (a class attribute: mm reads it)
    for name in FLAG_METHODS:
        assert getattr(x, name)() is False and getattr(t, name)() is False, name
    assert x.pin_memory() is x and x.share_memory_() is x and x.record_stream(None) is None


def test_get_device_itemsize_nbytes_layout(device):
    for dtype in (torch.float32, torch.float16, torch.int64, torch.int32, torch.bool, torch.uint8):
        t = torch.zeros(3, 5, dtype=dtype)
        x = ours(t, device)
        assert (x.itemsize, x.nbytes, x.element_size()) == (t.itemsize, t.nbytes, t.element_size())
    x = torchweb.zeros(2, device=device)
    assert x.get_device() == (-1 if device == "cpu" else 0)
    assert torch.zeros(2).get_device() == -1
    assert x.layout is torchweb.strided and repr(x.layout) == repr(torch.zeros(2).layout) == "torch.strided"
    assert x.name is None and x.output_nr == 0
    with pytest.warns(UserWarning, match="volatile was removed"):
        assert x.volatile is False
    assert x.grad_dtype is x.dtype


def test_layout_and_memory_format_objects():
    for name in ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "jagged"):
        assert isinstance(getattr(torchweb, name), torchweb.layout)
        assert repr(getattr(torchweb, name)) == repr(getattr(torch, name))
    for name in ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format"):
        assert isinstance(getattr(torchweb, name), torchweb.memory_format)
        assert repr(getattr(torchweb, name)) == repr(getattr(torch, name))
    import pickle
    assert pickle.loads(pickle.dumps(torchweb.channels_last)) is torchweb.channels_last
    assert pickle.loads(pickle.dumps(torchweb.sparse_coo)) is torchweb.sparse_coo


def test_channels_last_strides_and_values(device):
    t, x = _pair((2, 3, 4, 5), device, requires_grad=True)
    for call in (lambda a, m: a.contiguous(memory_format=m), lambda a, m: a.to(memory_format=m),
                 lambda a, m: a.clone(memory_format=m)):
        r, y = call(t, torch.channels_last), call(x, torchweb.channels_last)
        assert y.stride() == r.stride()
        assert y.is_contiguous() == r.is_contiguous() is False
        assert y.is_contiguous(memory_format=torchweb.channels_last) is True
        assert_close(y, r.detach())
        (r * r).sum().backward()
        (y * y).sum().backward()
        assert_close(x.grad, t.grad)
        t.grad = None
        x.grad = None
    assert x.contiguous(memory_format=torchweb.preserve_format).stride() == \
        t.contiguous(memory_format=torch.preserve_format).stride()
    y = x.detach().contiguous(memory_format=torchweb.channels_last)
    assert y.contiguous(memory_format=torchweb.channels_last) is y
    assert y.dim_order() == t.detach().contiguous(memory_format=torch.channels_last).dim_order()
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        torchweb.zeros(2, 3, device=device).contiguous(memory_format=torchweb.channels_last)
    with pytest.raises(RuntimeError, match="required rank 5 tensor to use channels_last_3d"):
        x.to(memory_format=torchweb.channels_last_3d)
    t5, x5 = _pair((2, 3, 2, 2, 2), device)
    assert x5.contiguous(memory_format=torchweb.channels_last_3d).stride() == \
        t5.contiguous(memory_format=torch.channels_last_3d).stride()
    assert x5.is_contiguous(memory_format=torchweb.channels_last) is \
        t5.is_contiguous(memory_format=torch.channels_last)


def test_dim_order(device):
    for shape, perm in (((2, 3, 5, 7), None), ((2, 3, 5, 7), (0, 2, 1, 3)), ((4, 5), (1, 0)), ((3,), None)):
        t = torch.zeros(shape)
        x = torchweb.zeros(shape, device=device)
        if perm:
            t, x = t.permute(perm), x.permute(perm)
        assert x.dim_order() == t.dim_order()
    with pytest.raises(RuntimeError, match="does not have unique dim order"):
        torchweb.zeros(1, 2, 3, 4, device=device).dim_order(ambiguity_check=True)
    assert torchweb.zeros(1, 2, 3, 4, device=device).dim_order(
        ambiguity_check=[torchweb.contiguous_format, torchweb.channels_last]) == (0, 1, 2, 3)
    with pytest.raises(TypeError, match="must be a bool or a list of memory formats"):
        torchweb.zeros(2, device=device).dim_order(ambiguity_check="ILLEGAL")


# -- type_as, devices, dtypes ----------------------------------------------------------------
def test_type_as(device):
    t, x = _pair(device=device)
    i = torch.tensor([1, 2])
    assert_close(x.type_as(ours(i, device)), t.type_as(i))
    assert_close(ours(i, device).type_as(x), i.type_as(t))
    y = x.type_as(torchweb.zeros(1, device="cpu"))
    assert y.device.type == "cpu"


def test_cuda_moves_to_webgpu_and_others_refuse():
    x = torchweb.ones(2, device="cpu")
    assert x.cuda().device.type == "webgpu"
    assert x.cuda(0).device.type == "webgpu"
    for name in ("xpu", "ipu", "mtia"):
        with pytest.raises(RuntimeError, match=f"no {name.upper()} device"):
            getattr(x, name)()


@pytest.mark.parametrize("method,dtype", [("char", "int8"), ("short", "int16"),
                                          ("cdouble", "complex128"),
                                          ("chalf", "complex32")])
def test_unsupported_dtype_shorthands_name_the_dtype(method, dtype):
    assert getattr(torch.ones(2), method)().dtype == getattr(torch, dtype)
    with pytest.raises(TypeError, match=f"torch.{dtype} is not supported"):
        getattr(torchweb.ones(2), method)()


# -- the complex API on real tensors ---------------------------------------------------------
def test_conj_real_resolve_are_the_tensor_itself(device):
    t, x = _pair(device=device)
    for name in ("conj", "resolve_conj", "resolve_neg", "conj_physical"):
        assert getattr(x, name)() is x and getattr(torchweb, name)(x) is x
        assert getattr(t, name)() is t
    assert x.real is x and torchweb.real(x) is x and t.real is t
    assert x.conj_physical_() is x
    assert torchweb.is_conj(x) is False and torchweb.is_neg(x) is False
    for thing, arg in ((torch, t), (torchweb, x)):
        with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
            arg.imag
        with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
            thing.imag(arg)


def test_angle(device):
    t = torch.tensor([-2.0, -0.0, 0.0, 3.0, math.nan, math.inf, -math.inf], requires_grad=True)
    x = ours(t, device, requires_grad=True)
    r, y = t.angle(), x.angle()
    assert_close(y, r.detach())
    r.sum().backward()
    y.sum().backward()
    assert_close(x.grad, t.grad)
    for dtype in (torch.int64, torch.int32, torch.bool, torch.uint8, torch.float16):
        i = torch.tensor([-3, 0, 1]).to(dtype)
        assert_close(torchweb.angle(ours(i, device)), torch.angle(i))
    out = torchweb.empty(7, device=device)
    torchweb.angle(x.detach(), out=out)
    assert_close(out, r.detach())


def test_H_mT_mH_adjoint(device):
    t, x = _pair((2, 3, 4), device)
    assert_close(x.mT, t.mT)
    assert_close(x.mH, t.mH)
    assert_close(x.adjoint(), t.adjoint())
    assert_close(torchweb.adjoint(x), torch.adjoint(t))
    assert_close(x[0].H, t[0].H)
    for thing, arg in ((t, x), (x, t)):
        with pytest.raises(RuntimeError, match="tensor.H is only supported on matrices"):
            thing[0, 0].H
        with pytest.raises(RuntimeError, match="consider using tensor.mH"):
            thing.H
        with pytest.raises(RuntimeError, match="tensor.mT is only supported on matrices or batches"):
            thing[0, 0].mT
        with pytest.raises(RuntimeError, match=r"tensor.adjoint\(\) is only supported"):
            thing[0, 0].adjoint()
    with pytest.warns(UserWarning, match="Tensor.H is deprecated on 0-D tensors"):
        assert_close(x[0, 0, 0].H, t[0, 0, 0])


# -- in-place view ops -------------------------------------------------------------------------
@pytest.mark.parametrize("op", [("t_",), ("transpose_", 0, 1), ("swapaxes_", 1, 0), ("swapdims_", 0, 1),
                                ("squeeze_",), ("squeeze_", 1), ("unsqueeze_", 0), ("unsqueeze_", -1),
                                ("as_strided_", (3, 2), (1, 3))])
def test_in_place_view_ops(device, op):
    name, *args = op
    t0, x0 = _pair((2, 1, 3) if name == "squeeze_" else (2, 3), device, requires_grad=True)
    t, x = t0 * 2, x0 * 2
    assert getattr(x, name)(*args) is x
    getattr(t, name)(*args)
    assert x.shape == t.shape and x.stride() == t.stride()
    assert x.grad_fn is not None
    assert_close(x, t.detach())
    w = torch.arange(t.numel(), dtype=torch.float32).reshape(t.shape)
    (t * w).sum().backward()
    (x * ours(w, device)).sum().backward()
    assert_close(x0.grad, t0.grad)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        getattr(x0, name)(*args)


# -- data_ptr and storages ---------------------------------------------------------------------
def test_data_ptr_identity(device):
    x = torchweb.zeros(4, 5, device=device)
    t = torch.zeros(4, 5)
    for f in (lambda a: a.t(), lambda a: a.view(20), lambda a: a.detach(), lambda a: a[:2]):
        assert (f(x).data_ptr() == x.data_ptr()) == (f(t).data_ptr() == t.data_ptr())
    assert x[1].data_ptr() - x.data_ptr() == t[1].data_ptr() - t.data_ptr() == 20
    assert x[1].const_data_ptr() == x[1].data_ptr()
    assert x.clone().data_ptr() != x.data_ptr()
    y = torchweb.zeros(4, 5, device=device)
    assert not (y.data_ptr() <= x.data_ptr() < y.data_ptr() + y.nbytes)
    assert torchweb.zeros(0, device=device).data_ptr() == torch.zeros(0).data_ptr() == 0
    # tied weights, as nn.Module code checks them
    lin = torchweb.nn.Linear(3, 3)
    emb = torchweb.nn.Embedding(3, 3)
    emb.weight = lin.weight
    assert emb.weight.untyped_storage().data_ptr() == lin.weight.untyped_storage().data_ptr()


def test_storage_objects(device):
    t = torch.arange(12.0).view(3, 4)
    x = ours(t, device)
    assert x[1:].untyped_storage().nbytes() == t[1:].untyped_storage().nbytes() == 48
    assert x.untyped_storage().size() == t.untyped_storage().size()
    assert x.t().untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        s = x[1].storage()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = t[1].storage()
    assert (s.size(), len(s), s.element_size(), s.tolist()) == (r.size(), len(r), r.element_size(), r.tolist())
    assert x.storage_type().__name__ == t.storage_type().__name__ == "FloatStorage"
    assert ours(torch.tensor([1]), device).storage_type().__name__ == "LongStorage"


def test_set_and_is_set_to(device):
    t = torch.arange(12.0)
    x = ours(t, device)
    a, b = torch.zeros(2), torchweb.zeros(2, device=device)
    a.set_(t)
    b.set_(x)
    assert b.is_set_to(x) and a.is_set_to(t)
    assert b.data_ptr() == x.data_ptr()
    a.set_(t.untyped_storage(), 2, (2, 3), (3, 1))
    b.set_(x.untyped_storage(), 2, (2, 3), (3, 1))
    assert_close(b, a)
    assert not b.is_set_to(x)
    b.fill_(-1.0)   # writes through to x's storage
    a.fill_(-1.0)
    assert_close(x, t)
    a.set_()
    b.set_()
    assert b.shape == a.shape == (0,)
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        torchweb.zeros(2, device=device).set_(x.untyped_storage(), 0, (4, 4))
    with pytest.raises(RuntimeError, match="Expected a Storage of type"):
        torchweb.zeros(2, dtype=torchweb.int32, device=device).set_(x)


def test_resize(device):
    t = torch.arange(6.0)
    x = ours(t, device)
    assert x.resize_(2, 2) is x
    t.resize_(2, 2)
    assert_close(x, t)
    x.resize_(3, 3)
    t.resize_(3, 3)
    assert x.shape == t.shape and x.stride() == t.stride()
    assert_close(x.reshape(-1)[:6], t.reshape(-1)[:6])   # the old values first; the rest unset
    tv, xv = torch.arange(6.0).view(2, 3).t(), ours(torch.arange(6.0), device).view(2, 3).t()
    tv.resize_(2, 3)
    xv.resize_(2, 3)
    assert xv.stride() == tv.stride()
    assert_close(xv, tv)
    t2, x2 = torch.zeros(5), torchweb.zeros(5, device=device)
    t2.resize_as_(torch.zeros(2, 2))
    x2.resize_as_(torchweb.zeros(2, 2))
    assert x2.shape == t2.shape
    t3, x3 = torch.zeros(2, 3, 4, 5), torchweb.zeros(2, 3, 4, 5, device=device)
    t3.resize_(2, 3, 4, 6, memory_format=torch.channels_last)
    x3.resize_(2, 3, 4, 6, memory_format=torchweb.channels_last)
    assert x3.stride() == t3.stride()
    g = torchweb.ones(3, requires_grad=True, device=device)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        g.resize_(2)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        assert_close(ours(torch.arange(6.0), device).resize(3, 2), torch.arange(6.0).view(3, 2))
    with pytest.raises(RuntimeError, match="autograd's resize can only change the shape"), \
            pytest.warns(UserWarning):
        g.resize(2)
    with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
        assert ours(torch.arange(6.0), device).resize_as(torchweb.zeros(2, 3)).shape == (2, 3)


def test_new_and_new_empty_strided(device):
    t, x = _pair(device=device)
    for args in ((), (2, 3), (torch.Size([4]),), ([1.5, 2.5],)):
        targs = args
        wargs = tuple(torchweb.Size(a) if isinstance(a, torch.Size) else a for a in args)
        r, y = t.new(*targs), x.new(*wargs)
        assert y.shape == r.shape and y.dtype.name == str(r.dtype)[6:] and y.device == x.device
        if args and isinstance(args[0], list):
            assert_close(y, r)
    i = ours(torch.tensor([1, 2]), device)
    assert i.new([3, 4]).dtype is torchweb.int64
    assert x.new(x).data_ptr() == x.data_ptr()
    r, y = t.new_empty_strided((2, 3), (1, 2)), x.new_empty_strided((2, 3), (1, 2))
    assert y.shape == r.shape and y.stride() == r.stride() and y.untyped_storage().nbytes() == r.untyped_storage().nbytes()
    y = x.new_empty_strided((2, 2), (2, 1), dtype=torchweb.int32, requires_grad=False)
    assert y.dtype is torchweb.int32


def test_module_load_and_as_subclass(device):
    t, x = _pair(device=device)
    z = torchweb.zeros(2, 3, 4, device=device)
    assert z.module_load(x) is not x
    assert_close(z, t)
    assert z.module_load(x, assign=True).data_ptr() == x.data_ptr()

    class Sub(torchweb.Tensor):
        pass
    leaf = ours(t, device, requires_grad=True)
    s = (leaf * 2).as_subclass(Sub)
    assert type(s) is Sub and isinstance(s, torchweb.Tensor)
    s.sum().backward()
    assert_close(leaf.grad, torch.full_like(t, 2.0))
    with pytest.raises(TypeError, match="subclass of torch.Tensor"):
        x.as_subclass(int)


# -- a Python function per element -------------------------------------------------------------
def test_apply_map_map2(device):
    t = torch.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    x = ours(t, device)
    assert x.apply_(lambda v: v * v + 1) is x
    t.apply_(lambda v: v * v + 1)
    assert_close(x, t)
    o = torch.tensor([10.0, 20.0, 30.0])
    x.map_(ours(o, device), lambda a, b: a - b)
    t.map_(o, lambda a, b: a - b)
    assert_close(x, t)
    x.map2_(ours(o, device), ours(t, device), lambda a, b, c: a + b * c)
    t.map2_(o, t.clone(), lambda a, b, c: a + b * c)
    assert_close(x, t)
    i = torch.tensor([1, 2, 3])
    y = ours(i, device)
    y.apply_(lambda v: v * 7 // 2)
    i.apply_(lambda v: v * 7 // 2)
    assert_close(y, i)
    g = torchweb.ones(2, requires_grad=True, device=device)
    with pytest.raises(RuntimeError, match=r"Can't call apply_\(\) on Variable that requires grad"):
        g.apply_(lambda v: v)


# -- random_ -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int64", "uint8", "bool"])
def test_random_default_range(device, dtype):
    torchweb.manual_seed(3)
    x = torchweb.empty(20000, dtype=getattr(torchweb, dtype), device=device)
    assert x.random_() is x
    t = torch.empty(20000, dtype=getattr(torch, dtype)).random_()
    v = theirs(x).long()
    # PyTorch's bounds: every integer the dtype holds exactly (int64: torchweb's int32 range)
    hi = {"float32": 2 ** 24, "float16": 2 ** 11, "int32": 2 ** 31 - 1, "int64": 2 ** 31 - 1,
          "uint8": 255, "bool": 1}[dtype]
    assert int(t.min()) >= 0 and int(t.max()) <= (2 ** 63 - 1 if dtype == "int64" else hi)
    assert int(t.max()) > hi * 0.99 or dtype == "int64"
    assert int(v.min()) >= 0 and int(v.max()) <= hi
    # roughly uniform over [0, hi]: the mean within a few standard errors
    sd = (hi + 1) / math.sqrt(12) / math.sqrt(v.numel())
    assert abs(v.double().mean().item() - hi / 2) < 6 * sd + 0.5


@pytest.mark.parametrize("args", [(5,), (-3, 5), (2, 3), (0, 1000)])
def test_random_from_to(device, args):
    torchweb.manual_seed(4)
    x = torchweb.empty(5000, device=device).random_(*args)
    lo, hi = (0, args[0]) if len(args) == 1 else args
    v = theirs(x)
    assert torch.equal(v, v.round()) and int(v.min()) == lo and int(v.max()) == hi - 1
    counts = torch.bincount((v - lo).long(), minlength=hi - lo).double()
    expected = 5000 / (hi - lo)
    assert ((counts - expected).abs() < 6 * math.sqrt(expected) + 1).all()
    y = torchweb.empty(10, dtype=torchweb.int64, device=device).random_(**{"from": 3, "to": 5})
    assert set(y.tolist()) <= {3, 4}
    y = torchweb.empty(10, device=device).random_(3, None)
    assert min(y.tolist()) >= 3


def test_random_same_stream_on_both_devices():
    torchweb.manual_seed(11)
    a = torchweb.empty(100, device="cpu").random_(0, 50).tolist()
    torchweb.manual_seed(11)
    b = torchweb.empty(100, device="webgpu").random_(0, 50).tolist()
    assert a == b


def test_random_refusals(device):
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to', but got from=5 >= to=2"):
        torchweb.empty(3, device=device).random_(5, 2)
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for unsigned char"):
        torchweb.empty(3, dtype=torchweb.uint8, device=device).random_(0, 300)
    with pytest.raises(RuntimeError, match="from is out of bounds for unsigned char"):
        torchweb.empty(3, dtype=torchweb.uint8, device=device).random_(-1, 3)
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for bool"):
        torchweb.empty(3, dtype=torchweb.bool, device=device).random_(0, 3)
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for int"):
        torchweb.empty(3, dtype=torchweb.int32, device=device).random_(0, 2 ** 31 + 1)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        torchweb.ones(2, requires_grad=True, device=device).random_()
    for thing in (torch, torchweb):
        with pytest.raises(RuntimeError, match="to - 1 is out of bounds for c10::Half"):
            thing.empty(3, dtype=thing.float16).random_(0, 2 ** 24 + 2)


# -- autograd hooks ------------------------------------------------------------------------------
def test_post_accumulate_grad_hook(device):
    results = {}
    for lib, dev in ((torch, "cpu"), (torchweb, device)):
        v = lib.tensor([0.0, 0.0, 0.0], requires_grad=True, device=dev)
        seen = []

        def hook(p, seen=seen):
            seen.append(p.grad.tolist())
            with lib.no_grad():
                p.add_(p.grad, alpha=-0.01)
        h = v.register_post_accumulate_grad_hook(hook)
        (v * lib.tensor([1.0, 2.0, 3.0], device=dev)).sum().backward()
        (v * 2).sum().backward()
        h.remove()
        (v * 2).sum().backward()
        results[lib.__name__] = (seen, v.detach().tolist(), v.grad.tolist())
        with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf"):
            (v * 2).register_post_accumulate_grad_hook(hook)
        with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require"):
            lib.zeros(2).register_post_accumulate_grad_hook(hook)
    a, b = results["torch"], results["torchweb"]
    assert a[0] == b[0]
    assert torch.allclose(torch.tensor(a[1]), torch.tensor(b[1])) and a[2] == b[2]


# -- the torch.* forms and PyTorch's keyword names ---------------------------------------------
def test_torch_functions_of_the_methods(device):
    t, x = torch.zeros(6), torchweb.zeros(6, device=device)
    assert torchweb.get_device(x) == x.get_device() and torch.get_device(t) == -1
    assert torchweb.is_inference(x) is torch.is_inference(t) is False
    assert torchweb.is_distributed(x) is torch.is_distributed(t) is False
    assert torchweb.resize_as_(x, torchweb.zeros(2, 3)).shape == torch.resize_as_(t, torch.zeros(2, 3)).shape
    assert torchweb.as_strided_(x, (3,), (2,)).stride() == torch.as_strided_(t, (3,), (2,)).stride()
    assert torchweb.conj_physical_(x) is x and torch.conj_physical_(t) is t
    assert torchweb.legacy_contiguous_format is torchweb.contiguous_format


def test_keyword_forms(device):
    t, x = torch.arange(6.0), ours(torch.arange(6.0), device)
    assert x.new(size=(2, 3)).shape == t.new(size=(2, 3)).shape
    assert x.new(other=x).data_ptr() == x.data_ptr()
    assert x.new(x.untyped_storage()).shape == t.new(t.untyped_storage()).shape
    assert x.resize_(size=(2, 2)).shape == t.resize_(size=(2, 2)).shape
    x.map_(other=ours(torch.ones(2, 2), device), callable=lambda a, b: a + b)
    t.map_(other=torch.ones(2, 2), callable=lambda a, b: a + b)
    assert_close(x, t)
    x.record_stream(s=None)
