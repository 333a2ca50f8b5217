"""Layer modules (nn/modules: batchnorm, normalization, instancenorm, dropout, sparse, pooling,
padding, ...) against PyTorch's modules from the same state_dict: forward and backward on both
devices, train vs eval, repr, state_dict keys, default initialization, constructor errors."""

import math

import pytest
import torch

import torchweb
from nn_layer_oracle import (check_ctor_error, check_forward_error, check_module, compare_state, pair, run,
                             uniform_bounds)
from oracle import assert_close, make, ours, theirs


def B(name, *args, **kw):
    return lambda nn: getattr(nn, name)(*args, **kw)


# -- batch norm ----------------------------------------------------------------------------
BN = [
    ("BatchNorm1d", (3,), {}, (4, 3)),
    ("BatchNorm1d", (3,), {"momentum": 0.3, "eps": 1e-3}, (2, 3, 5)),
    ("BatchNorm1d", (3,), {"affine": False}, (4, 3)),
    ("BatchNorm2d", (3,), {}, (2, 3, 4, 3)),
    ("BatchNorm2d", (3,), {"bias": False}, (2, 3, 2, 2)),
    ("BatchNorm2d", (3,), {"track_running_stats": False}, (2, 3, 2, 3)),
    ("BatchNorm2d", (2,), {"momentum": None}, (3, 2, 2, 2)),
    ("BatchNorm3d", (2,), {}, (2, 2, 2, 3, 2)),
    ("BatchNorm3d", (2,), {"affine": False, "track_running_stats": False}, (2, 2, 2, 1, 2)),
]


@pytest.mark.parametrize("name,args,kw,shape", BN, ids=[f"{c[0]}-{i}" for i, c in enumerate(BN)])
def test_batch_norm_module(device, name, args, kw, shape):
    build = B(name, *args, **kw)
    mine, ref = pair(build, device)
    # a few training steps (running stats and num_batches_tracked move), then eval
    for _ in range(3):
        run(mine, ref, [make(shape)], device)
    mine.eval()
    ref.eval()
    run(mine, ref, [make(shape)], device)
    # eval output after loading stats that differ from the init ones
    mine.train()
    ref.train()
    run(mine, ref, [make(shape)], device, grad=False)


def test_batch_norm_buffers_and_state(device):
    m = torchweb.nn.BatchNorm2d(4, device=device)
    r = torch.nn.BatchNorm2d(4)
    assert list(m.state_dict()) == list(r.state_dict()) == [
        "weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert m.num_batches_tracked.dtype == torchweb.int64 and m.num_batches_tracked.dim() == 0
    assert m.weight.tolist() == [1.0] * 4 and m.bias.tolist() == [0.0] * 4
    assert m.running_mean.tolist() == [0.0] * 4 and m.running_var.tolist() == [1.0] * 4
    assert [n for n, _ in m.named_buffers()] == [n for n, _ in r.named_buffers()]
    m(torchweb.ones((2, 4, 2, 2), device=device))
    assert m.num_batches_tracked.item() == 1
    m.reset_running_stats()
    assert m.num_batches_tracked.item() == 0 and m.running_var.tolist() == [1.0] * 4
    n = torchweb.nn.BatchNorm1d(3, track_running_stats=False)
    assert n.running_mean is None and list(n.state_dict()) == ["weight", "bias"]
    # old checkpoints without num_batches_tracked load (version < 2)
    sd = {k: v for k, v in torchweb.nn.BatchNorm1d(3).state_dict().items() if k != "num_batches_tracked"}
    torchweb.nn.BatchNorm1d(3).load_state_dict(sd)


def test_batch_norm_repr():
    for kw in ({}, {"momentum": None, "affine": False}, {"eps": 1e-3, "track_running_stats": False, "bias": False}):
        for name in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
                     "InstanceNorm3d"):
            assert repr(getattr(torchweb.nn, name)(5, **kw)) == repr(getattr(torch.nn, name)(5, **kw))


@pytest.mark.parametrize("name,shape", [("BatchNorm1d", (2, 3, 4, 5)), ("BatchNorm1d", (3,)),
                                        ("BatchNorm2d", (2, 3, 4)), ("BatchNorm3d", (2, 3, 4, 4)),
                                        ("BatchNorm2d", (2, 4, 3, 3)),     # wrong channel count
                                        ("BatchNorm1d", (1, 3))])          # one value per channel
def test_batch_norm_forward_errors(device, name, shape):
    check_forward_error(B(name, 3), [make(shape)], device)


# -- instance norm -------------------------------------------------------------------------
IN = [
    ("InstanceNorm1d", (3,), {}, (2, 3, 5)),
    ("InstanceNorm1d", (3,), {"affine": True}, (3, 4)),        # unbatched
    ("InstanceNorm2d", (3,), {"affine": True, "track_running_stats": True}, (2, 3, 3, 2)),
    ("InstanceNorm2d", (2,), {"track_running_stats": True, "momentum": 0.4}, (2, 3, 3)),   # unbatched
    ("InstanceNorm3d", (2,), {"affine": True, "bias": False}, (2, 2, 2, 2, 3)),
]


@pytest.mark.parametrize("name,args,kw,shape", IN, ids=[f"{c[0]}-{i}" for i, c in enumerate(IN)])
def test_instance_norm_module(device, name, args, kw, shape):
    mine, ref = pair(B(name, *args, **kw), device)
    for _ in range(2):
        run(mine, ref, [make(shape)], device)
    mine.eval()
    ref.eval()
    run(mine, ref, [make(shape)], device)


def test_instance_norm_errors(device):
    check_forward_error(B("InstanceNorm2d", 3, affine=True), [make((2, 4, 3, 3))], device)
    check_forward_error(B("InstanceNorm1d", 3), [make((2, 3, 3, 3))], device)
    with pytest.warns(UserWarning):
        torchweb.nn.InstanceNorm1d(4)(torchweb.ones((2, 3, 5), device=device))


# -- layer norm, rms norm, group norm, local response norm ---------------------------------
NORMS = [
    ("LayerNorm", (5,), {}, (3, 5)),
    ("LayerNorm", ((3, 4),), {"eps": 1e-3}, (2, 3, 4)),
    ("LayerNorm", ([4],), {"elementwise_affine": False}, (2, 3, 4)),
    ("LayerNorm", (4,), {"bias": False}, (2, 4)),
    ("RMSNorm", (5,), {}, (3, 5)),
    ("RMSNorm", ([2, 3],), {"eps": 1e-4}, (4, 2, 3)),
    ("RMSNorm", (3,), {"elementwise_affine": False}, (2, 3)),
    ("GroupNorm", (2, 4), {}, (2, 4, 3)),
    ("GroupNorm", (3, 6), {"eps": 1e-3, "affine": False}, (2, 6, 2, 2)),
    ("GroupNorm", (1, 2), {"bias": False}, (3, 2, 4)),
    ("LocalResponseNorm", (3,), {}, (2, 5, 3)),
    ("LocalResponseNorm", (2,), {"alpha": 0.1, "beta": 0.5, "k": 2.0}, (2, 4, 3, 2)),
]


@pytest.mark.parametrize("name,args,kw,shape", NORMS, ids=[f"{c[0]}-{i}" for i, c in enumerate(NORMS)])
def test_norm_modules(device, name, args, kw, shape):
    build = B(name, *args, **kw)
    mine, ref = pair(build, device)
    # non-default affine values, so the parameter path is exercised
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(make(tuple(p.shape)))
    mine.load_state_dict({k: ours(v, device) for k, v in ref.state_dict().items()})
    run(mine, ref, [make(shape)], device)
    mine.eval()
    ref.eval()
    run(mine, ref, [make(shape)], device, grad=False)


def test_norm_init_and_errors():
    m = torchweb.nn.LayerNorm((2, 3))
    assert m.normalized_shape == (2, 3) and m.weight.tolist() == [[1.0] * 3] * 2 and m.bias.tolist() == [[0.0] * 3] * 2
    g = torchweb.nn.GroupNorm(2, 4)
    assert g.weight.tolist() == [1.0] * 4 and g.bias.tolist() == [0.0] * 4
    assert torchweb.nn.RMSNorm(3).weight.tolist() == [1.0] * 3
    check_ctor_error(B("GroupNorm", 3, 4))
    with pytest.raises(NotImplementedError):
        torchweb.nn.CrossMapLRN2d(3)


@pytest.mark.parametrize("name,args,shape", [("LayerNorm", (5,), (3, 4)), ("GroupNorm", (2, 4), (2, 6, 3)),
                                             ("RMSNorm", ((2, 3),), (4, 3, 2))])
def test_norm_forward_errors(device, name, args, shape):
    check_forward_error(B(name, *args), [make(shape)], device)


# -- dropout ---------------------------------------------------------------------------------
DROPOUT = [("Dropout", (4, 50)), ("Dropout1d", (4, 30, 3)), ("Dropout2d", (4, 30, 2, 2)),
           ("Dropout3d", (2, 30, 2, 1, 2)), ("AlphaDropout", (4, 50)), ("FeatureAlphaDropout", (4, 30, 3))]


@pytest.mark.parametrize("name,shape", DROPOUT)
def test_dropout_eval_is_identity(device, name, shape):
    check_module(B(name, 0.4), [make(shape)], device, modes=("eval",))


@pytest.mark.parametrize("name,shape", DROPOUT)
def test_dropout_train(device, name, shape):
    torchweb.manual_seed(1)
    m = getattr(torchweb.nn, name)(p=0.4)
    x = torchweb.tensor(make(shape, low=1.0, high=2.0).tolist(), device=device, requires_grad=True)
    y = m(x)
    assert m.training and tuple(y.shape) == shape
    yt, xt = theirs(y.detach()), theirs(x.detach())
    if name.endswith("AlphaDropout"):
        # dropped values all take one value a*(-alpha') + b; kept ones a*x + b
        alpha_p = -1.7580993408473766
        a = ((1 - 0.4) * (1 + 0.4 * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * 0.4
        dropped = torch.isclose(yt, torch.full_like(yt, a * alpha_p + b), atol=1e-5)
        kept = torch.isclose(yt, xt * a + b, atol=1e-5)
    else:
        dropped = yt == 0
        kept = torch.isclose(yt, xt / 0.6, rtol=1e-5)
    assert bool((dropped | kept).all())
    frac = dropped.float().mean().item()
    assert 0.2 < frac < 0.6, frac
    if name not in ("Dropout", "AlphaDropout"):   # whole channels
        per_channel = dropped.reshape(shape[0], shape[1], -1)
        assert bool((per_channel.all(-1) | ~per_channel.any(-1)).all())
    y.sum().backward()
    g = theirs(x.grad)
    assert bool(((g == 0) == dropped).all())
    torchweb.manual_seed(1)
    assert theirs(getattr(torchweb.nn, name)(p=0.4)(x.detach())).tolist() == yt.tolist()


def test_dropout_inplace_and_repr(device):
    for name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
        assert repr(getattr(torchweb.nn, name)()) == repr(getattr(torch.nn, name)())
        assert repr(getattr(torchweb.nn, name)(0.2, True)) == repr(getattr(torch.nn, name)(0.2, True))
        check_ctor_error(B(name, 1.5))
        check_ctor_error(B(name, -0.1))
    x = torchweb.ones((3, 40), device=device)
    y = torchweb.nn.Dropout(0.5, inplace=True)(x)
    assert y is x and 0 < (x == 0).sum().item() < 120
    assert torchweb.nn.Dropout(0.0)(x).tolist() == x.tolist()
    assert (torchweb.nn.Dropout(1.0)(torchweb.ones(5, device=device)) == 0).all().item()


# -- embedding -----------------------------------------------------------------------------
EMB = [
    ((6, 3), {}, [[1, 2, 2], [0, 5, 1]]),
    ((6, 3), {"padding_idx": 2}, [1, 2, 2, 4]),
    ((6, 3), {"padding_idx": -1}, [[5, 0], [5, 3]]),
    ((5, 4), {"scale_grad_by_freq": True}, [1, 1, 3, 1, 0]),
    ((5, 2), {"max_norm": 1.0}, [0, 2, 2]),
    ((5, 2), {"max_norm": 1.5, "norm_type": 1.0}, [[4], [3]]),
]


@pytest.mark.parametrize("args,kw,idx", EMB)
def test_embedding_module(device, args, kw, idx):
    mine, ref = pair(B("Embedding", *args, **kw), device)
    if "padding_idx" in kw:
        assert theirs(mine.weight.detach())[ref.padding_idx].abs().sum().item() == 0
    run(mine, ref, [torch.tensor(idx)], device)


def test_embedding_init_and_from_pretrained(device):
    torchweb.manual_seed(0)
    m = torchweb.nn.Embedding(200, 10, device=device)
    w = theirs(m.weight.detach())
    assert abs(w.mean().item()) < 0.05 and abs(w.std().item() - 1) < 0.05    # N(0, 1)
    assert m.padding_idx is None and m.sparse is False
    pre = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    e = torchweb.nn.Embedding.from_pretrained(torchweb.tensor(pre, device=device))
    r = torch.nn.Embedding.from_pretrained(torch.tensor(pre))
    assert repr(e) == repr(r) and not e.weight.requires_grad and e.weight.tolist() == pre
    assert e(torchweb.tensor([2, 0], device=device)).tolist() == [[5.0, 6.0], [1.0, 2.0]]
    e2 = torchweb.nn.Embedding.from_pretrained(torchweb.tensor(pre, device=device), freeze=False, padding_idx=1)
    assert e2.weight.requires_grad and e2.padding_idx == 1 and e2.weight.tolist() == pre   # not zeroed
    mine, ref = pair(lambda nn: nn.Embedding.from_pretrained(
        (torchweb if nn is torchweb.nn else torch).tensor(pre), freeze=False, max_norm=2.0), device)
    run(mine, ref, [torch.tensor([1, 2, 1])], device)
    with pytest.raises(AssertionError):
        torchweb.nn.Embedding.from_pretrained(torchweb.ones(3))
    with pytest.raises(AssertionError):
        torchweb.nn.Embedding(3, 2, _weight=torchweb.ones((2, 3)))


def test_embedding_repr_and_errors(device):
    for kw in ({}, {"padding_idx": 1, "max_norm": 2.0, "norm_type": 1.0, "scale_grad_by_freq": True, "sparse": True}):
        assert repr(torchweb.nn.Embedding(4, 3, **kw)) == repr(torch.nn.Embedding(4, 3, **kw))
        assert repr(torchweb.nn.EmbeddingBag(4, 3, **kw)) == repr(torch.nn.EmbeddingBag(4, 3, **kw))
    for pad in (4, -5, 10):
        check_ctor_error(B("Embedding", 4, 3, padding_idx=pad))
        check_ctor_error(B("EmbeddingBag", 4, 3, padding_idx=pad))
    check_forward_error(B("Embedding", 4, 3), [torch.tensor([1.0])], device)
    if device == "cpu":   # out-of-range indices on webgpu are reported at the next read-back
        check_forward_error(B("Embedding", 4, 3), [torch.tensor([4])], device)


EBAG = [
    ({}, [[0, 2], [1, 3], [4, 4]], None),
    ({"mode": "sum"}, [1, 2, 4, 4, 3, 0], [0, 2, 2]),
    ({"mode": "max"}, [[0, 1], [2, 3]], None),
    ({"mode": "sum", "include_last_offset": True}, [1, 2, 4, 3, 0], [0, 2, 3, 5]),
    ({"padding_idx": 0}, [0, 2, 0, 3], [0, 2]),
]


@pytest.mark.parametrize("kw,idx,offsets", EBAG)
def test_embedding_bag_module(device, kw, idx, offsets):
    mine, ref = pair(B("EmbeddingBag", 5, 3, **kw), device)
    inputs = [torch.tensor(idx)] + ([torch.tensor(offsets)] if offsets is not None else [])
    run(mine, ref, inputs, device)


def test_embedding_bag_from_pretrained(device):
    pre = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    e = torchweb.nn.EmbeddingBag.from_pretrained(torchweb.tensor(pre, device=device), mode="sum")
    r = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(pre), mode="sum")
    assert repr(e) == repr(r) and not e.weight.requires_grad
    assert e(torchweb.tensor([[0, 2]], device=device)).tolist() == [[6.0, 8.0]]
    mine, ref = pair(B("EmbeddingBag", 5, 3, mode="sum"), device)
    run(mine, ref, [torch.tensor([0, 1, 1, 4]), torch.tensor([0, 3])], device,
        kwargs={"per_sample_weights": torch.tensor([0.5, 1.0, -2.0, 3.0])})


# -- pooling -------------------------------------------------------------------------------
POOL = [
    ("MaxPool1d", (3,), {}, (2, 3, 8)),
    ("MaxPool1d", (3,), {"stride": 2, "padding": 1, "dilation": 2, "ceil_mode": True}, (2, 7)),
    ("MaxPool2d", (2,), {}, (2, 3, 4, 6)),
    ("MaxPool2d", ((3, 2),), {"stride": (2, 1), "padding": (1, 0), "ceil_mode": True}, (1, 2, 7, 5)),
    ("MaxPool2d", (2,), {"dilation": 2, "stride": 1}, (3, 5, 5)),
    ("MaxPool3d", (2,), {"stride": 1}, (1, 2, 3, 3, 4)),
    ("AvgPool1d", (3,), {"stride": 2, "padding": 1}, (2, 3, 7)),
    ("AvgPool1d", (2,), {"ceil_mode": True, "count_include_pad": False}, (2, 2, 5)),
    ("AvgPool2d", (2,), {}, (2, 3, 4, 4)),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False, "ceil_mode": True}, (1, 2, 6, 5)),
    ("AvgPool2d", (2,), {"divisor_override": 3}, (2, 4, 4)),
    ("AvgPool3d", ((1, 2, 2),), {"stride": 1}, (1, 2, 2, 3, 3)),
    ("LPPool1d", (2, 3), {}, (2, 3, 7)),
    ("LPPool2d", (3.0, 2), {"stride": 1}, (1, 2, 4, 3)),
    ("LPPool2d", (2, (2, 3)), {"ceil_mode": True}, (2, 2, 5, 5)),
    ("LPPool3d", (2, 2), {}, (1, 2, 2, 4, 4)),
    ("AdaptiveAvgPool1d", (3,), {}, (2, 3, 7)),
    ("AdaptiveAvgPool2d", ((2, 3),), {}, (2, 3, 5, 7)),
    ("AdaptiveAvgPool2d", (1,), {}, (2, 4, 3, 3)),
    ("AdaptiveAvgPool2d", ((None, 2),), {}, (3, 4, 5)),
    ("AdaptiveAvgPool3d", (2,), {}, (1, 2, 3, 4, 5)),
    ("AdaptiveMaxPool1d", (3,), {}, (2, 3, 7)),
    ("AdaptiveMaxPool2d", ((2, 3),), {}, (2, 2, 5, 7)),
    ("AdaptiveMaxPool3d", ((1, 2, 2),), {}, (1, 2, 3, 4, 5)),
]


def _distinct(shape):
    n = math.prod(shape)
    g = torch.Generator().manual_seed(n)
    return (torch.randperm(n, generator=g).float() * 0.25 - n / 8).reshape(shape)   # no ties: unique argmax


@pytest.mark.parametrize("name,args,kw,shape", POOL, ids=[f"{c[0]}-{i}" for i, c in enumerate(POOL)])
def test_pool_modules(device, name, args, kw, shape):
    x = _distinct(shape)
    if name.startswith("LP"):
        x = x.abs() + 0.5
    check_module(B(name, *args, **kw), [x], device, modes=("train",))


@pytest.mark.parametrize("name,args,kw,shape", [
    ("MaxPool1d", (3,), {"stride": 2, "return_indices": True}, (2, 3, 8)),
    ("MaxPool2d", (2,), {"return_indices": True, "padding": 1}, (2, 2, 5, 5)),
    ("MaxPool3d", (2,), {"return_indices": True, "ceil_mode": True}, (1, 1, 3, 3, 3)),
    ("AdaptiveMaxPool1d", (2,), {"return_indices": True}, (2, 5)),
    ("AdaptiveMaxPool2d", (2,), {"return_indices": True}, (1, 2, 5, 4)),
    ("AdaptiveMaxPool3d", (2,), {"return_indices": True}, (1, 1, 3, 4, 2)),
])
def test_pool_return_indices(device, name, args, kw, shape):
    mine, ref = pair(B(name, *args, **kw), device)
    run(mine, ref, [_distinct(shape)], device, out_index=0)


@pytest.mark.parametrize("r,kw,shape", [(1, {}, (2, 3, 8)), (2, {"stride": 1}, (1, 2, 5, 5)),
                                        (2, {"padding": 1}, (2, 3, 4)), (3, {}, (1, 2, 4, 4, 2))])
def test_max_unpool_modules(device, r, kw, shape):
    x = _distinct(shape)
    pool_t = getattr(torch.nn, f"MaxPool{r}d")(2, return_indices=True, **kw)
    out, idx = pool_t(x)
    if "padding" not in kw:   # with padding the default size can be smaller than the pooled input
        mine, ref = pair(B(f"MaxUnpool{r}d", 2, **kw), device)
        run(mine, ref, [out, idx], device)
    size = list(x.shape[-r:])
    mine, ref = pair(B(f"MaxUnpool{r}d", 2, **kw), device)
    run(mine, ref, [out, idx], device, kwargs={"output_size": size})


def test_pool_repr_and_attributes():
    cases = [("MaxPool2d", (3,), {}), ("MaxPool1d", (2, 1, 1, 2, True, True), {}), ("AvgPool1d", (3,), {}),
             ("AvgPool2d", ((2, 3),), {"stride": 1}), ("AvgPool3d", (2,), {"divisor_override": 2}),
             ("LPPool2d", (2, 3), {}), ("LPPool1d", (1.5, 2, 1, True), {}), ("AdaptiveAvgPool2d", ((None, 3),), {}),
             ("AdaptiveMaxPool1d", (4, True), {}), ("MaxUnpool2d", (2,), {}), ("MaxUnpool3d", ((1, 2, 2), 1), {}),
             ("MaxUnpool1d", (3, None, 1), {})]
    for name, args, kw in cases:
        m, r = getattr(torchweb.nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
        assert repr(m) == repr(r)
        for a in ("kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices",
                  "count_include_pad", "divisor_override", "output_size", "norm_type"):
            assert getattr(m, a, None) == getattr(r, a, None), (name, a)
        assert list(m.state_dict()) == [] and list(m.parameters()) == []
    assert repr(torchweb.nn.FractionalMaxPool2d(2, output_size=3)) == repr(torch.nn.FractionalMaxPool2d(2, output_size=3))


@pytest.mark.parametrize("name,args,shape", [
    ("MaxPool2d", (3,), (1, 2, 2, 2)),          # window larger than input
    ("MaxPool2d", (2, 2, 2), (1, 2, 4, 4)),     # padding more than half the kernel
    ("AvgPool1d", (2,), (2, 3, 4, 5)),          # wrong rank
    ("AdaptiveAvgPool2d", ((2, 3, 4),), (1, 2, 5, 5)),
    ("MaxPool1d", (0,), (1, 2, 4)),
])
def test_pool_forward_errors(device, name, args, shape):
    check_forward_error(B(name, *args), [make(shape)], device)


# -- shape layers, upsampling, padding, fold, distance -------------------------------------
SIMPLE = [
    ("Flatten", (), {}, [(2, 3, 4)]),
    ("Flatten", (0, 1), {}, [(2, 3, 4)]),
    ("Flatten", (), {"start_dim": -2}, [(2, 3, 4, 2)]),
    ("Unflatten", (1, (2, 3)), {}, [(2, 6, 2)]),
    ("Unflatten", (-1, [2, -1]), {}, [(3, 8)]),
    ("PixelShuffle", (2,), {}, [(2, 8, 2, 3)]),
    ("PixelUnshuffle", (2,), {}, [(1, 2, 4, 6)]),
    ("ChannelShuffle", (2,), {}, [(2, 6, 2, 2)]),
    ("Upsample", (), {"scale_factor": 2}, [(1, 2, 3, 3)]),
    ("Upsample", ((5, 4),), {"mode": "bilinear"}, [(1, 2, 3, 3)]),
    ("Upsample", (), {"scale_factor": (1.5, 2.0), "mode": "bicubic", "align_corners": True}, [(1, 1, 3, 3)]),
    ("Upsample", (7,), {"mode": "linear"}, [(2, 2, 4)]),
    ("Upsample", (), {"scale_factor": 2, "mode": "trilinear"}, [(1, 1, 2, 2, 3)]),
    ("Upsample", (), {"scale_factor": 1.7, "mode": "nearest-exact", "recompute_scale_factor": True}, [(1, 2, 3, 4)]),
    ("UpsamplingNearest2d", (), {"scale_factor": 3}, [(1, 2, 2, 3)]),
    ("UpsamplingBilinear2d", ((5, 6),), {}, [(2, 1, 3, 3)]),
    ("ZeroPad1d", (2,), {}, [(2, 3, 4)]),
    ("ZeroPad2d", ((1, 0, 2, 1),), {}, [(1, 2, 3, 3)]),
    ("ZeroPad2d", ((-1, 1, 0, 2),), {}, [(2, 3, 4)]),      # negative pads crop
    ("ZeroPad3d", (1,), {}, [(1, 1, 2, 2, 2)]),
    ("ConstantPad1d", ((1, 3), 2.5), {}, [(2, 4)]),
    ("ConstantPad2d", (1, -1.0), {}, [(1, 2, 2, 3)]),
    ("ConstantPad3d", ((1, 0, 0, 1, 2, 0), 0.5), {}, [(1, 2, 2, 2)]),
    ("ReflectionPad1d", ((2, 1),), {}, [(2, 3, 4)]),
    ("ReflectionPad2d", (1,), {}, [(1, 2, 3, 4)]),
    ("ReflectionPad2d", ((2, 0, 1, 2),), {}, [(2, 3, 3)]),
    ("ReflectionPad3d", (1,), {}, [(1, 1, 2, 3, 3)]),
    ("ReplicationPad1d", (3,), {}, [(2, 2, 3)]),
    ("ReplicationPad2d", ((1, 2, 0, 3),), {}, [(1, 2, 3, 3)]),
    ("ReplicationPad3d", ((1, 0, 1, 0, 0, 2),), {}, [(1, 2, 2, 2, 2)]),
    ("CircularPad1d", (2,), {}, [(2, 2, 4)]),
    ("CircularPad2d", ((1, 2, 2, 0),), {}, [(1, 2, 3, 3)]),
    ("CircularPad3d", (1,), {}, [(2, 2, 3, 3)]),
    ("Unfold", (2,), {}, [(2, 3, 4, 4)]),
    ("Unfold", ((2, 3),), {"dilation": (1, 2), "padding": 1, "stride": 2}, [(1, 2, 5, 6)]),
    ("Fold", ((4, 5), 2), {}, [(2, 12, 12)]),
    ("Fold", ((5, 5), (2, 3)), {"stride": 2, "padding": 1}, [(1, 6, 9)]),
    ("PairwiseDistance", (), {}, [(3, 4), (3, 4)]),
    ("PairwiseDistance", (1.0,), {"eps": 1e-3, "keepdim": True}, [(3, 4), (1, 4)]),
    ("PairwiseDistance", (3.0,), {}, [(5,), (5,)]),
    ("CosineSimilarity", (), {}, [(3, 4), (3, 4)]),
    ("CosineSimilarity", (0,), {"eps": 1e-6}, [(4, 2), (4, 1)]),
]


@pytest.mark.parametrize("name,args,kw,shapes", SIMPLE, ids=[f"{c[0]}-{i}" for i, c in enumerate(SIMPLE)])
def test_simple_modules(device, name, args, kw, shapes):
    check_module(B(name, *args, **kw), [make(s) for s in shapes], device, modes=("train",))


def test_simple_module_errors(device):
    for bad in ((2, 3.0), 6, "a"):
        check_ctor_error(B("Unflatten", 1, bad))
    check_forward_error(B("CircularPad2d", 1), [make((3, 3))], device)
    check_forward_error(B("CircularPad1d", 1), [make((1, 2, 3, 3))], device)
    check_forward_error(B("ReflectionPad1d", 4), [make((1, 2, 3))], device)
    check_forward_error(B("PixelShuffle", 2), [make((1, 3, 2, 2))], device)
    check_forward_error(B("Fold", (4, 5), 2), [make((2, 11, 12))], device)
    check_forward_error(B("Flatten", 0, 5), [make((2, 3))], device)
    assert repr(torchweb.nn.Upsample(scale_factor=(2, 3))) == repr(torch.nn.Upsample(scale_factor=(2, 3)))
    assert torchweb.nn.Upsample(scale_factor=(2, 3)).scale_factor == (2.0, 3.0)
    assert torchweb.nn.PairwiseDistance(3).norm == 3


# -- a small CNN end to end ----------------------------------------------------------------
def _cnn(nn):
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 4, 3, padding="same", padding_mode="reflect", bias=False),
                         nn.GroupNorm(2, 4), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.3),
                         nn.Linear(4, 5))


def test_cnn_stack(device):
    mine, ref = pair(_cnn, device)
    assert list(mine.state_dict()) == [
        "0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var",
        "1.num_batches_tracked", "4.weight", "5.weight", "5.bias", "9.weight", "9.bias"]
    mine.eval()
    ref.eval()
    run(mine, ref, [make((2, 3, 6, 6))], device)
    # training (dropout off by p=0 in both for a deterministic comparison)
    mine[8].p = ref[8].p = 0.0
    mine.train()
    ref.train()
    for _ in range(2):
        run(mine, ref, [make((2, 3, 6, 6))], device)


@pytest.mark.parametrize("layout", ["transposed", "strided"])
@pytest.mark.parametrize("name,args,kw,shape", [
    ("Conv2d", (3, 4, 3), {"padding": 1}, (2, 3, 4, 5)),
    ("Conv1d", (2, 3, 2), {"padding_mode": "reflect", "padding": 1}, (2, 2, 5)),
    ("ConvTranspose2d", (3, 2, 2), {"stride": 2}, (2, 3, 3, 2)),
    ("BatchNorm2d", (3,), {}, (2, 3, 2, 3)),
    ("LayerNorm", (4,), {}, (3, 2, 4)),
    ("GroupNorm", (2, 4), {}, (2, 4, 3)),
    ("MaxPool2d", (2,), {}, (2, 3, 4, 4)),
    ("AvgPool1d", (2,), {}, (2, 3, 4)),
    ("AdaptiveAvgPool2d", (2,), {}, (2, 2, 5, 3)),
    ("ReflectionPad2d", (1,), {}, (2, 2, 3, 3)),
    ("Upsample", (), {"scale_factor": 2, "mode": "bilinear"}, (1, 2, 3, 3)),
    ("Flatten", (), {}, (2, 3, 4)),
])
def test_non_contiguous_inputs(device, name, args, kw, shape, layout):
    x = _distinct(shape)
    mine, ref = pair(B(name, *args, **kw), device)
    run(mine, ref, [x], device, layout=layout)


def test_module_to_half_and_back(device):
    m = torchweb.nn.Sequential(torchweb.nn.Conv2d(2, 3, 3), torchweb.nn.BatchNorm2d(3)).to(device)
    m.half()
    assert m[0].weight.dtype == torchweb.float16 and m[1].running_mean.dtype == torchweb.float16
    assert m[1].num_batches_tracked.dtype == torchweb.int64
    y = m(torchweb.ones((2, 2, 4, 4), dtype=torchweb.float16, device=device))
    assert y.dtype == torchweb.float16 and tuple(y.shape) == (2, 3, 2, 2)
    m.float()
    assert m[1].running_var.dtype == torchweb.float32
