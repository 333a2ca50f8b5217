"""torchweb.utils.data against PyTorch's torch.utils.data: the same batches (values, dtypes,
structure) for unshuffled loaders, the same collation, lengths, drop_last and exceptions;
random orders (torchweb's generator, not PyTorch's mt19937) are checked as permutations,
deterministic under a seed or a Generator, and by their statistics."""

import collections
import math
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as TD

import torchweb
import torchweb.utils.data as WD

Point = collections.namedtuple("Point", ["x", "y"])


@pytest.fixture(autouse=True)
def default_device(request):
    """Python numbers collate onto the default device (PyTorch's rule; torchweb's default is
    webgpu where there is an adapter): the test's device, else cpu."""
    before = torchweb.get_default_device()
    torchweb.set_default_device(request.getfixturevalue("device") if "device" in request.fixturenames else "cpu")
    yield
    torchweb.set_default_device(before)


# -- comparing nested batches -------------------------------------------------------------------
def _dtype_name(d):
    return str(d).replace("torch.", "")


def same(got, want, device="cpu", path="batch"):
    """got (torchweb's) matches want (PyTorch's): the same containers, keys, strings, and
    tensors of the same shape, dtype and values (PyTorch's float64 from Python floats is
    float32 in torchweb: WebGPU has no float64). Tensors must be on `device`."""
    if isinstance(want, torch.Tensor):
        assert isinstance(got, torchweb.Tensor), f"{path}: {type(got).__name__}, expected a tensor"
        assert list(got.shape) == list(want.shape), f"{path}: shape {list(got.shape)} vs {list(want.shape)}"
        want_dtype = "float32" if want.dtype == torch.float64 else _dtype_name(want.dtype)
        assert _dtype_name(got.dtype) == want_dtype, f"{path}: dtype {got.dtype} vs {want.dtype}"
        assert got.device.type == device, f"{path}: on {got.device}, expected {device}"
        g, w = got.tolist(), want.tolist()
        if want.is_floating_point():
            assert torch.allclose(torch.tensor(g, dtype=torch.float64), torch.tensor(w, dtype=torch.float64),
                                  rtol=1e-6, atol=0), f"{path}: {g} vs {w}"
        else:
            assert g == w, f"{path}: {g} vs {w}"
        return
    assert type(got).__name__ == type(want).__name__, f"{path}: {type(got).__name__} vs {type(want).__name__}"
    if isinstance(want, dict):
        assert list(got) == list(want), f"{path}: keys {list(got)} vs {list(want)}"
        for k in want:
            same(got[k], want[k], device, f"{path}[{k!r}]")
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), f"{path}: length {len(got)} vs {len(want)}"
        if hasattr(want, "_fields"):
            assert got._fields == want._fields
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, device, f"{path}[{i}]")
    elif isinstance(want, np.ndarray):
        assert np.array_equal(got, want), path
    else:
        assert got == want, f"{path}: {got!r} vs {want!r}"


def same_batches(got_loader, want_loader, device="cpu"):
    got, want = list(got_loader), list(want_loader)
    assert len(got) == len(want), f"{len(got)} batches vs {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        same(g, w, device, f"batch {i}")


def raises_like(fn_ours, fn_theirs):
    """Both raise, the same exception type and message (or both return)."""
    try:
        fn_theirs()
    except Exception as e:
        want = e
    else:
        fn_ours()
        return
    with pytest.raises(type(want)) as info:
        fn_ours()
    assert str(info.value) == str(want), f"{info.value!s} vs {want!s}"


# -- datasets built the same way on both sides ----------------------------------------------------
X = [[0.5 * i - 1.0, i * 0.25, -float(i)] for i in range(7)]
Y = [i % 3 for i in range(7)]


def tensor_dataset(m, device=None):
    if m is torch:
        return TD.TensorDataset(torch.tensor(X), torch.tensor(Y))
    return WD.TensorDataset(torchweb.tensor(X, device=device), torchweb.tensor(Y, device=device))


def mapped(base):
    class Mapped(base):
        """Samples of every collatable kind."""

        def __init__(self, m, device=None):
            self.m, self.device = m, device

        def __len__(self):
            return 5

        def __getitem__(self, i):
            kw = {"device": self.device} if self.m is torchweb else {}
            return {"img": self.m.tensor([[i, i + 1.5], [2.0 * i, -i]], **kw), "label": i, "w": i / 4,
                    "flag": i % 2 == 0, "name": f"s{i}", "raw": bytes([65 + i]),
                    "pair": (i, [i * 2, i * 0.5]), "pt": Point(i, self.m.tensor(i, **kw)),
                    "nested": {"a": [self.m.tensor([i, i], **kw)]}}
    return Mapped


TMapped, WMapped = mapped(TD.Dataset), mapped(WD.Dataset)


def stream(base):
    class Stream(base):
        def __init__(self, n, m, device=None):
            self.n, self.m, self.device = n, m, device

        def __iter__(self):
            kw = {"device": self.device} if self.m is torchweb else {}
            for i in range(self.n):
                yield self.m.tensor([i, 2 * i], **kw), i

        def __len__(self):
            return self.n
    return Stream


TStream, WStream = stream(TD.IterableDataset), stream(WD.IterableDataset)


# -- DataLoader: unshuffled batches --------------------------------------------------------------
@pytest.mark.parametrize("batch_size", [1, 2, 3, 7, 10, None])
@pytest.mark.parametrize("drop_last", [False, True])
def test_tensor_dataset_batches(device, batch_size, drop_last):
    if batch_size is None and drop_last:
        pytest.skip("an error case (test_conflicting_arguments)")
    ours = WD.DataLoader(tensor_dataset(torchweb, device), batch_size=batch_size, drop_last=drop_last)
    theirs = TD.DataLoader(tensor_dataset(torch), batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    same_batches(ours, theirs, device)


def test_tensor_dataset_indexing(device):
    ours, theirs = tensor_dataset(torchweb, device), tensor_dataset(torch)
    assert len(ours) == len(theirs) == 7
    for i in (0, 3, -1):
        same(ours[i], theirs[i], device)
    raises_like(lambda: WD.TensorDataset(torchweb.zeros(3), torchweb.zeros(4)),
                lambda: TD.TensorDataset(torch.zeros(3), torch.zeros(4)))


@pytest.mark.parametrize("batch_size", [2, 5, None])
def test_mixed_samples_batches(device, batch_size):
    ours = WD.DataLoader(WMapped(torchweb, device), batch_size=batch_size)
    theirs = TD.DataLoader(TMapped(torch), batch_size=batch_size)
    assert len(ours) == len(theirs)
    same_batches(ours, theirs, device)


def test_subset_of_tensor_dataset(device):
    """A Subset chain over a TensorDataset batches as PyTorch's (one gather per tensor)."""
    idx = [6, 0, 3, 5, 1]
    ours = WD.Subset(WD.Subset(tensor_dataset(torchweb, device), idx), [4, 3, 0, 1])
    theirs = TD.Subset(TD.Subset(tensor_dataset(torch), idx), [4, 3, 0, 1])
    same_batches(WD.DataLoader(ours, batch_size=3), TD.DataLoader(theirs, batch_size=3), device)
    assert ours[1][1].item() == theirs[1][1].item()


def test_custom_samplers_and_collate(device):
    ds_w, ds_t = tensor_dataset(torchweb, device), tensor_dataset(torch)
    order = [3, 1, 6, 0]
    same_batches(WD.DataLoader(ds_w, batch_size=3, sampler=order), TD.DataLoader(ds_t, batch_size=3, sampler=order),
                 device)
    batches = [[1, 2], [6], [0, 5, 4]]
    ours, theirs = WD.DataLoader(ds_w, batch_sampler=batches), TD.DataLoader(ds_t, batch_sampler=batches)
    assert len(ours) == len(theirs) == 3
    same_batches(ours, theirs, device)
    ours = WD.DataLoader(ds_w, batch_size=4, collate_fn=lambda b: [s[1].item() for s in b])
    theirs = TD.DataLoader(ds_t, batch_size=4, collate_fn=lambda b: [s[1].item() for s in b])
    assert list(ours) == list(theirs) == [[0, 1, 2, 0], [1, 2, 0]]
    # batch_size=None: samples one by one through default_convert
    same_batches(WD.DataLoader(ds_w, batch_size=None, sampler=[2, 4]),
                 TD.DataLoader(ds_t, batch_size=None, sampler=[2, 4]), device)
    # sequential samplers given explicitly
    same_batches(WD.DataLoader(ds_w, batch_sampler=WD.BatchSampler(WD.SequentialSampler(ds_w), 4, True)),
                 TD.DataLoader(ds_t, batch_sampler=TD.BatchSampler(TD.SequentialSampler(ds_t), 4, True)), device)


def test_getitems_is_used():
    class Batched(WD.Dataset):
        calls = []

        def __len__(self):
            return 6

        def __getitem__(self, i):
            raise AssertionError("__getitems__ should be used")

        def __getitems__(self, idx):
            self.calls.append(list(idx))
            return [i * 10 for i in idx]

    out = [b.tolist() for b in WD.DataLoader(Batched(), batch_size=4)]
    assert out == [[0, 10, 20, 30], [40, 50]] and Batched.calls == [[0, 1, 2, 3], [4, 5]]


def test_requires_grad_dataset_keeps_stack():
    x = torchweb.tensor(X, requires_grad=True)
    batch = next(iter(WD.DataLoader(WD.TensorDataset(x), batch_size=3)))[0]
    tx = torch.tensor(X, requires_grad=True)
    want = next(iter(TD.DataLoader(TD.TensorDataset(tx), batch_size=3)))[0]
    assert batch.grad_fn.name() == want.grad_fn.name()
    batch.sum().backward()
    want.sum().backward()
    assert x.grad.tolist() == tx.grad.tolist()


# -- IterableDataset ------------------------------------------------------------------------------
@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (2, False), (2, True), (3, True), (5, False),
                                                  (None, False)])
def test_iterable_dataset(device, batch_size, drop_last):
    ours = WD.DataLoader(WStream(5, torchweb, device), batch_size=batch_size, drop_last=drop_last)
    theirs = TD.DataLoader(TStream(5, torch), batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    same_batches(ours, theirs, device)


def test_iterable_dataset_len_warning():
    class Liar(WD.IterableDataset):
        def __iter__(self):
            return iter(range(4))

        def __len__(self):
            return 2

    loader = WD.DataLoader(Liar(), batch_size=None)
    assert len(loader) == 2
    with pytest.warns(UserWarning, match="was reported to be 2"):
        assert list(loader) == [0, 1, 2, 3]   # ints: default_convert keeps them


def test_chain_and_concat():
    ours = WD.ChainDataset([WStream(2, torchweb), WStream(3, torchweb)])
    theirs = TD.ChainDataset([TStream(2, torch), TStream(3, torch)])
    assert len(ours) == len(theirs) == 5
    same_batches(WD.DataLoader(ours, batch_size=2), TD.DataLoader(theirs, batch_size=2))
    same_batches(WD.DataLoader(WStream(2, torchweb) + WStream(1, torchweb), batch_size=2),
                 TD.DataLoader(TStream(2, torch) + TStream(1, torch), batch_size=2))
    raises_like(lambda: list(WD.ChainDataset([[1, 2]])), lambda: list(TD.ChainDataset([[1, 2]])))
    raises_like(lambda: len(WD.ChainDataset([[1, 2]])), lambda: len(TD.ChainDataset([[1, 2]])))
    with pytest.raises(TypeError):
        WD.IterableDataset()   # abstract, as PyTorch's

    a, b = tensor_dataset(torchweb), WD.Subset(tensor_dataset(torchweb), [1, 2])
    ta, tb = tensor_dataset(torch), TD.Subset(tensor_dataset(torch), [1, 2])
    ours, theirs = a + b, ta + tb
    assert isinstance(ours, WD.ConcatDataset) and len(ours) == len(theirs) == 9
    assert ours.cumulative_sizes == theirs.cumulative_sizes
    for i in (0, 6, 7, 8, -1, -9):
        same(ours[i], theirs[i])
    same_batches(WD.DataLoader(ours, batch_size=4), TD.DataLoader(theirs, batch_size=4))
    raises_like(lambda: ours[-10], lambda: theirs[-10])
    raises_like(lambda: ours[9], lambda: theirs[9])
    raises_like(lambda: WD.ConcatDataset([]), lambda: TD.ConcatDataset([]))
    raises_like(lambda: WD.ConcatDataset([WStream(1, torchweb)]), lambda: TD.ConcatDataset([TStream(1, torch)]))


def test_stack_dataset():
    xs, ys = list(range(4)), [i * 0.5 for i in range(4)]
    ours, theirs = WD.StackDataset(xs, ys), TD.StackDataset(xs, ys)
    assert len(ours) == len(theirs) == 4 and ours[2] == theirs[2]
    same_batches(WD.DataLoader(ours, batch_size=3), TD.DataLoader(theirs, batch_size=3))
    ours, theirs = WD.StackDataset(a=xs, b=tensor_dataset(torchweb)[:4][0]), TD.StackDataset(
        a=xs, b=tensor_dataset(torch)[:4][0])
    same_batches(WD.DataLoader(ours, batch_size=3), TD.DataLoader(theirs, batch_size=3))
    for args, kwargs in (((xs,), {"b": ys}), ((xs, ys[:3]), {}), ((), {"a": xs, "b": ys[:1]}), ((), {})):
        raises_like(lambda: WD.StackDataset(*args, **kwargs), lambda: TD.StackDataset(*args, **kwargs))


def test_subset():
    ours, theirs = WD.Subset(list("abcdef"), [5, 1, 3]), TD.Subset(list("abcdef"), [5, 1, 3])
    assert len(ours) == len(theirs) == 3 and ours[0] == theirs[0] == "f"
    assert ours.__getitems__([2, 0]) == theirs.__getitems__([2, 0])

    def bad(base):
        class Bad(base):
            def __getitem__(self, i):
                return 0
        return Bad
    raises_like(lambda: bad(WD.Subset)([1], [0]), lambda: bad(TD.Subset)([1], [0]))


# -- errors ---------------------------------------------------------------------------------------
CONFLICTS = [
    dict(batch_size=None, drop_last=True),
    dict(batch_sampler=[[0]], batch_size=2),
    dict(batch_sampler=[[0]], shuffle=True),
    dict(batch_sampler=[[0]], sampler=[0]),
    dict(batch_sampler=[[0]], drop_last=True),
    dict(sampler=[0, 1], shuffle=True),
    dict(num_workers=-1),
    dict(timeout=-1),
    dict(prefetch_factor=2),
    dict(num_workers=2, prefetch_factor=-1),
    dict(persistent_workers=True),
    dict(multiprocessing_context="spawn"),
]


@pytest.mark.parametrize("kwargs", CONFLICTS, ids=lambda k: ",".join(k))
def test_conflicting_arguments(kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raises_like(lambda: WD.DataLoader(tensor_dataset(torchweb), **kwargs),
                    lambda: TD.DataLoader(tensor_dataset(torch), **kwargs))


@pytest.mark.parametrize("kwargs", [dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])],
                         ids=lambda k: ",".join(k))
def test_iterable_dataset_refuses_sampling(kwargs):
    # The messages name the option's value: the same value on both sides.
    raises_like(lambda: WD.DataLoader(WStream(3, torchweb), **kwargs),
                lambda: TD.DataLoader(TStream(3, torch), **kwargs))


def test_attributes_frozen_after_init():
    for name in ("batch_size", "sampler", "drop_last", "dataset"):
        raises_like(lambda: setattr(WD.DataLoader([1, 2]), name, 3), lambda: setattr(TD.DataLoader([1, 2]), name, 3))
    loader = WD.DataLoader([1, 2])
    loader.collate_fn = WD.default_collate   # others may change


def test_worker_options_accepted():
    import torchweb.utils.data.dataloader as dl
    dl._warned_workers = False
    with pytest.warns(UserWarning, match="worker processes are not available in the browser"):
        loader = WD.DataLoader(tensor_dataset(torchweb), batch_size=3, num_workers=2, pin_memory=True,
                               persistent_workers=True, prefetch_factor=4, worker_init_fn=lambda i: 1 / 0,
                               timeout=5, multiprocessing_context="spawn", in_order=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # once only
        WD.DataLoader(tensor_dataset(torchweb), num_workers=4)
        same_batches(loader, TD.DataLoader(tensor_dataset(torch), batch_size=3))
        same_batches(loader, TD.DataLoader(tensor_dataset(torch), batch_size=3))   # persistent: again
    assert loader.prefetch_factor == 4 and WD.DataLoader([1], num_workers=1).prefetch_factor == 2
    assert WD.get_worker_info() is None and TD.get_worker_info() is None


def test_namespace():
    for cls in (WD.DataLoader, WD.Dataset, WD.IterableDataset, WD.Sampler):   # annotations subscript them
        assert cls[int] is not None
    assert torchweb.utils.data.DataLoader is WD.DataLoader
    assert torchweb.utils.data.default_collate is WD.default_collate
    for name in TD.__all__:
        if name in WD.__all__:
            assert hasattr(WD, name)
    missing = {"BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset",
               "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler",
               "TensorDataset", "WeightedRandomSampler", "default_collate", "default_convert", "get_worker_info",
               "random_split"} - set(dir(WD))
    assert not missing


# -- default_collate / default_convert ----------------------------------------------------------
def collate_cases(m, kw):
    t = lambda v, **k: m.tensor(v, **kw, **k)  # noqa: E731
    return [
        [0, 1, 2, 3],
        [1.5, -2.0, 3.25],
        [True, False, True],
        [1, 2.5],
        ["a", "b", "c"],
        [b"x", b"y"],
        [{"A": 0, "B": 1}, {"A": 100, "B": 100}],
        [Point(0, 0), Point(1, 1)],
        [(0, 1), (2, 3)],
        [[0, 1], [2, 3]],
        [t([1.0, 2.0]), t([3.0, 4.0])],
        [t(5), t(6)],
        [t([[1, 2]], dtype=m.int32), t([[3, 4]], dtype=m.int32)],
        [t([True]), t([False])],
        [t([0.5, 1.5], dtype=m.float16), t([2.5, 3.5], dtype=m.float16)],
        [t([]), t([])],
        [{"x": (t([1.0]), 2, "p"), "y": [{"z": 3.0}]}, {"x": (t([4.0]), 5, "q"), "y": [{"z": 6.0}]}],
        [collections.OrderedDict(a=1, b=t(2.0)), collections.OrderedDict(a=3, b=t(4.0))],
        [np.array([1.0, 2.0], dtype=np.float32), np.array([3.0, 4.0], dtype=np.float32)],
        [np.array([[1, 2]]), np.array([[3, 4]])],
        [np.int64(3), np.int64(4)],
        [np.float32(0.5), np.float32(1.5)],
        [np.bool_(True), np.bool_(False)],
        [(np.array([1, 2], dtype=np.int32), "n")] * 2,
    ]


@pytest.mark.parametrize("k", range(len(collate_cases(torch, {}))))
def test_default_collate(device, k):
    got = WD.default_collate(collate_cases(torchweb, {"device": device})[k])
    same(got, TD.default_collate(collate_cases(torch, {})[k]), device)


def test_default_collate_errors():
    for batch in ([[1, 2], [3]], [object(), object()], [np.array(["a"]), np.array(["b"])], [None]):
        raises_like(lambda: WD.default_collate(batch), lambda: TD.default_collate(batch))
    raises_like(lambda: WD.default_collate([torchweb.zeros(2), torchweb.zeros(3)]),
                lambda: TD.default_collate([torch.zeros(2), torch.zeros(3)]))


def convert_cases(m, kw):
    return [
        0, "s", 1.5,
        np.array([0, 1]),
        np.float32(2.5),
        np.array(["a", "b"]),
        Point(np.array(0), np.array(1)),
        [np.array([0, 1]), np.array([2, 3])],
        (np.array([1.0], dtype=np.float32), 3),
        {"a": np.array([1, 2]), "b": [np.int64(4), "x"]},
        m.tensor([1.0, 2.0], **kw),
    ]


@pytest.mark.parametrize("k", range(len(convert_cases(torch, {}))))
def test_default_convert(device, k):
    got = WD.default_convert(convert_cases(torchweb, {"device": device})[k])
    same(got, TD.default_convert(convert_cases(torch, {})[k]), device)


def test_collate_map_extension():
    from torchweb.utils.data import _collate
    assert WD.default_collate is _collate.default_collate

    class Custom:
        def __init__(self, v):
            self.v = v
    fmap = {Custom: lambda batch, *, collate_fn_map: sum(c.v for c in batch), **_collate.default_collate_fn_map}
    assert _collate.collate([(Custom(1), 2), (Custom(3), 4)], collate_fn_map=fmap)[0] == 4


# -- samplers ---------------------------------------------------------------------------------------
def test_sequential_and_batch_sampler():
    for n, bs, dl in ((10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False), (2, 5, True), (0, 2, False)):
        ours = WD.BatchSampler(WD.SequentialSampler(range(n)), bs, dl)
        theirs = TD.BatchSampler(TD.SequentialSampler(range(n)), bs, dl)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    for bad in (dict(batch_size=0, drop_last=False), dict(batch_size=True, drop_last=False),
                dict(batch_size=2.0, drop_last=False), dict(batch_size=2, drop_last=1)):
        raises_like(lambda: WD.BatchSampler(range(3), **bad), lambda: TD.BatchSampler(range(3), **bad))
    with pytest.raises(NotImplementedError):
        iter(WD.Sampler())


def _perm(it, n):
    out = list(it)
    assert sorted(out) == list(range(n)), out
    return out


def test_random_sampler_permutations():
    data = range(50)
    torchweb.manual_seed(7)
    a = _perm(WD.RandomSampler(data), 50)
    b = _perm(WD.RandomSampler(data), 50)
    torchweb.manual_seed(7)
    assert _perm(WD.RandomSampler(data), 50) == a and a != b and a != list(range(50))
    torchweb.manual_seed(8)
    assert _perm(WD.RandomSampler(data), 50) != a
    g = torchweb.Generator().manual_seed(3)
    s = WD.RandomSampler(data, generator=g)
    e1, e2 = _perm(s, 50), _perm(s, 50)   # a new order each epoch
    assert e1 != e2
    g.manual_seed(3)
    assert _perm(s, 50) == e1
    torchweb.manual_seed(0)
    assert _perm(WD.RandomSampler(data, generator=torchweb.Generator().manual_seed(3)), 50) == e1  # not the default
    # num_samples past n without replacement: whole permutations, then part of one
    out = list(WD.RandomSampler(range(4), num_samples=10))
    assert len(out) == 10 and sorted(out[:4]) == sorted(out[4:8]) == [0, 1, 2, 3] and len(set(out[8:])) == 2
    assert len(WD.RandomSampler(range(4), num_samples=10)) == 10


def test_random_sampler_replacement():
    g = torchweb.Generator().manual_seed(11)
    s = WD.RandomSampler(range(5), replacement=True, num_samples=5000, generator=g)
    out = list(s)
    assert len(out) == len(s) == 5000 and set(out) == set(range(5))
    counts = collections.Counter(out)
    assert all(abs(c - 1000) < 4 * math.sqrt(5000 * 0.2 * 0.8) for c in counts.values()), counts
    g.manual_seed(11)
    assert list(s) == out
    for kwargs in (dict(replacement=1), dict(num_samples=0), dict(num_samples=2.0), dict(num_samples=-1)):
        raises_like(lambda: WD.RandomSampler(range(3), **kwargs), lambda: TD.RandomSampler(range(3), **kwargs))


def test_subset_random_sampler():
    idx = [10, 20, 30, 40, 50]
    g = torchweb.Generator().manual_seed(5)
    s = WD.SubsetRandomSampler(idx, generator=g)
    a = list(s)
    assert sorted(a) == idx and len(s) == 5
    g.manual_seed(5)
    assert list(s) == a
    torchweb.manual_seed(1)
    b = list(WD.SubsetRandomSampler(idx))
    torchweb.manual_seed(1)
    assert list(WD.SubsetRandomSampler(idx)) == b


def test_weighted_random_sampler_statistics():
    w = [0.1, 0.9, 0.4, 0.7, 3.0, 0.0]
    n = 20000
    out = list(WD.WeightedRandomSampler(w, n, generator=torchweb.Generator().manual_seed(2)))
    counts = collections.Counter(out)
    total = sum(w)
    for i, wi in enumerate(w):
        p = wi / total
        assert abs(counts[i] - n * p) <= 5 * math.sqrt(n * p * (1 - p)) + 1, (i, counts[i], n * p)
    assert counts[5] == 0
    # without replacement: a permutation of distinct indices, the heavy one mostly first
    firsts = collections.Counter()
    g = torchweb.Generator().manual_seed(4)
    for _ in range(2000):
        draw = list(WD.WeightedRandomSampler([1.0, 1.0, 8.0], 3, replacement=False, generator=g))
        assert sorted(draw) == [0, 1, 2]
        firsts[draw[0]] += 1
    assert abs(firsts[2] / 2000 - 0.8) < 0.04, firsts
    # zero weights come after the positive ones, as PyTorch's
    assert sorted(list(WD.WeightedRandomSampler([1.0, 0.0, 0.0], 2, replacement=False))) == [0, 1]
    assert list(WD.WeightedRandomSampler([0.0, 2.0], 3)) == [1, 1, 1]
    torchweb.manual_seed(9)
    a = list(WD.WeightedRandomSampler(w, 50))
    torchweb.manual_seed(9)
    assert list(WD.WeightedRandomSampler(w, 50)) == a
    tw = torchweb.tensor(w)
    assert len(list(WD.WeightedRandomSampler(tw, 7))) == 7


def test_weighted_random_sampler_errors():
    for args, kwargs in (((2.0, 3.0), {}), (([1.0, 2.0], 0), {}), (([1.0, 2.0], True), {}),
                         (([1.0, 2.0], 2), {"replacement": 1}), (([[1.0, 2.0]], 2), {})):
        raises_like(lambda: WD.WeightedRandomSampler(*args, **kwargs),
                    lambda: TD.WeightedRandomSampler(*args, **kwargs))
    for w, n, r in (([1.0, 2.0], 3, False), ([-1.0, 2.0], 1, True), ([0.0, 0.0], 1, True),
                    ([float("nan"), 1.0], 1, True), ([float("inf"), 1.0], 1, True)):
        raises_like(lambda: list(WD.WeightedRandomSampler(w, n, r)), lambda: list(TD.WeightedRandomSampler(w, n, r)))


def test_shuffled_loader(device):
    ds = tensor_dataset(torchweb, device)

    def epoch(loader):
        batches = list(loader)
        assert [len(b[1]) for b in batches] == [3, 3, 1]
        for b in batches:
            assert b[0].device.type == device and b[1].device.type == device
        rows = [r for b in batches for r in b[0].tolist()]
        labels = [v for b in batches for v in b[1].tolist()]
        order = [X.index(r) for r in rows]
        assert sorted(order) == list(range(7)) and labels == [Y[i] for i in order]
        return order

    torchweb.manual_seed(0)
    loader = WD.DataLoader(ds, batch_size=3, shuffle=True)
    a, b = epoch(loader), epoch(loader)
    torchweb.manual_seed(0)
    assert epoch(loader) == a and a != b
    torchweb.manual_seed(1)
    assert epoch(loader) != a
    g = torchweb.Generator().manual_seed(42)
    loader = WD.DataLoader(ds, batch_size=3, shuffle=True, generator=g)
    c = epoch(loader)
    g.manual_seed(42)
    assert epoch(loader) == c
    # drop_last with shuffling
    assert [len(x[1]) for x in WD.DataLoader(ds, batch_size=3, shuffle=True, drop_last=True)] == [3, 3]
    assert isinstance(loader.sampler, WD.RandomSampler) and isinstance(loader.batch_sampler, WD.BatchSampler)


# -- random_split ---------------------------------------------------------------------------------
def test_random_split():
    data = list(range(10))
    for lengths in ([3, 7], [0.3, 0.3, 0.4], [0.5, 0.5], [1.0], [0.25, 0.25, 0.25, 0.25], [10, 0]):
        g = torchweb.Generator().manual_seed(42)
        ours = WD.random_split(data, lengths, generator=g)
        theirs = TD.random_split(data, lengths, generator=torch.Generator().manual_seed(42))
        assert [len(s) for s in ours] == [len(s) for s in theirs]
        assert all(isinstance(s, WD.Subset) for s in ours)
        assert sorted(x for s in ours for x in s) == data
        g.manual_seed(42)
        assert [list(s) for s in WD.random_split(data, lengths, generator=g)] == [list(s) for s in ours]
    torchweb.manual_seed(3)
    a = [list(s) for s in WD.random_split(data, [5, 5])]
    torchweb.manual_seed(3)
    assert [list(s) for s in WD.random_split(data, [5, 5])] == a
    torchweb.manual_seed(4)
    assert [list(s) for s in WD.random_split(data, [5, 5])] != a
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        WD.random_split(list(range(3)), [0.9, 0.1])
    for lengths in ([3, 3], [0.5, 0.6], [1.5, -0.5], [11]):
        raises_like(lambda: WD.random_split(data, lengths), lambda: TD.random_split(data, lengths))


def test_random_split_tensor_dataset_loader(device):
    train, val = WD.random_split(tensor_dataset(torchweb, device), [0.7, 0.3],
                                 generator=torchweb.Generator().manual_seed(1))
    seen = []
    for part in (train, val):
        for xb, yb in WD.DataLoader(part, batch_size=2):
            assert xb.device.type == device
            seen += [X.index(r) for r in xb.tolist()]
    assert sorted(seen) == list(range(7)) and len(train) == 5 and len(val) == 2
