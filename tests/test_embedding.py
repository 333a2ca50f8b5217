"""one_hot, embedding and embedding_bag (ops/composite/embedding.py) against PyTorch: forward on
both devices, the weight's gradient (rows summed per index, padding_idx left out), max_norm's in
place renormalization, indices out of range, bad input."""

import pytest
import torch

import torchweb
import torchweb.nn.functional  # noqa: F401
from oracle import assert_close, check, make, ours
from test_autograd_ops import NoGrad, run_case


def F(m):
    return m.nn.functional


def idx(shape, high, dtype=torch.int64):
    return make(shape, dtype=dtype, low=0, high=high - 1)


@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 0), (), (3, 2, 2)])
@pytest.mark.parametrize("num_classes", [-1, 6])
def test_one_hot(device, shape, num_classes):
    i = idx(shape, 6)
    check(lambda m, a: F(m).one_hot(a, num_classes), i, device=device)


@pytest.mark.parametrize("bad", [torch.tensor([1, -2]), torch.tensor([1, 6]), torch.tensor([1, 2], dtype=torch.int32),
                                 torch.zeros(0, dtype=torch.int64)])
def test_one_hot_bad(device, bad):
    check(lambda m, a: F(m).one_hot(a, 6 if bad.numel() == 2 and bad[1] == 6 else -1), bad, device=device)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("shape", [(4,), (2, 3), (0,), (), (2, 2, 3)])
def test_embedding_forward(device, shape, dtype):
    w = make((7, 3))
    i = idx(shape, 7, dtype)
    check(lambda m, a, w: F(m).embedding(a, w), i, w, device=device)
    check(lambda m, a, w: F(m).embedding(a, w, padding_idx=2), i, w, device=device)
    check(lambda m, a, w: m.embedding(w, a), i, w, device=device)


@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_embedding_strided_weight(device, layout):
    w, i = make((6, 5)), idx((4, 3), 6)
    check(lambda m, w, a: F(m).embedding(a, w), w, i, device=device, layout=layout)


def test_embedding_float16(device):
    w, i = make((6, 4), dtype=torch.float16), idx((5,), 6)
    check(lambda m, a, w: F(m).embedding(a, w), i, w, device=device)


@pytest.mark.parametrize("bad", [[7], [-1], [0, 9, 1]])
def test_embedding_index_out_of_range(device, bad):
    w = make((7, 3))
    with pytest.raises(IndexError):
        F(torchweb).embedding(torchweb.tensor(bad, device=device), ours(w, device)).tolist()
    # the device stays usable
    assert F(torchweb).embedding(torchweb.tensor([1], device=device), ours(w, device)).shape == (1, 3)


BAD = [
    lambda m: F(m).embedding(m.tensor([1.0]), m.ones(4, 3)),
    lambda m: F(m).embedding(m.tensor([1]), m.ones(4)),
    lambda m: F(m).embedding(m.tensor([1]), m.ones(4, 3), padding_idx=4),
    lambda m: F(m).embedding(m.tensor([1]), m.ones(4, 3), padding_idx=-5),
    lambda m: F(m).embedding_bag(m.tensor([[1, 2]]), m.ones(4, 3), m.tensor([0])),
    lambda m: F(m).embedding_bag(m.tensor([1, 2]), m.ones(4, 3)),
    lambda m: F(m).embedding_bag(m.tensor([1, 2]), m.ones(4, 3), m.tensor([0]), mode="min"),
    lambda m: F(m).embedding_bag(m.tensor([1, 2]), m.ones(4, 3), m.tensor([0]), mode="mean",
                                 per_sample_weights=m.ones(2)),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_embedding_bad_input(i):
    with pytest.raises(BaseException) as theirs:
        BAD[i](torch)
    with pytest.raises(type(theirs.value)):
        BAD[i](torchweb)


def test_embedding_max_norm(device):
    w = make((6, 3), low=-4, high=4)
    i = torch.tensor([[0, 2], [2, 5]])

    def fn(m, a, w):
        out = F(m).embedding(a, w, max_norm=1.5)
        return out, w   # the used rows of w were rescaled in place

    check(fn, i, w, device=device, rtol=1e-5, atol=1e-6)
    check(lambda m, a, w: (F(m).embedding(a, w, max_norm=2.0, norm_type=1.0), w), i, w, device=device)


def test_embedding_large(device):
    # 70000 * 2 outputs and gradient entries: both kernels cross 65535 workgroups
    w = torch.randn(50, 2)
    i = torch.randint(0, 50, (70000,))
    tw_w = torchweb.tensor(w.numpy(), device=device, requires_grad=True)
    out = F(torchweb).embedding(torchweb.tensor(i.numpy(), device=device), tw_w)
    wt = w.clone().requires_grad_()
    ref = torch.nn.functional.embedding(i, wt)
    assert_close(out.detach(), ref.detach())
    out.sum().backward()
    ref.sum().backward()
    assert_close(tw_w.grad, wt.grad, rtol=1e-5, atol=1e-3)


GRAD = {
    "embedding": (lambda T, a, w: F(T).embedding(a, w), lambda: (NoGrad(idx((3, 4), 6)), torch.randn(6, 3))),
    "embedding_dups": (lambda T, a, w: F(T).embedding(a, w), lambda: (NoGrad(torch.tensor([1, 1, 1, 4, 1])), torch.randn(5, 2))),
    "embedding_padding": (lambda T, a, w: F(T).embedding(a, w, padding_idx=1),
                          lambda: (NoGrad(torch.tensor([[1, 2], [1, 0]])), torch.randn(4, 3))),
    "embedding_padding_neg": (lambda T, a, w: F(T).embedding(a, w, padding_idx=-1),
                              lambda: (NoGrad(torch.tensor([3, 2, 3])), torch.randn(4, 3))),
    "embedding_freq": (lambda T, a, w: F(T).embedding(a, w, scale_grad_by_freq=True),
                       lambda: (NoGrad(torch.tensor([1, 1, 2, 1, 0])), torch.randn(4, 3))),
    "embedding_aten": (lambda T, a, w: T.embedding(w, a), lambda: (NoGrad(idx((4,), 5)), torch.randn(5, 2))),
    "bag_sum_2d": (lambda T, a, w: F(T).embedding_bag(a, w, mode="sum"), lambda: (NoGrad(idx((3, 4), 6)), torch.randn(6, 3))),
    "bag_mean_2d": (lambda T, a, w: F(T).embedding_bag(a, w), lambda: (NoGrad(idx((3, 4), 6)), torch.randn(6, 3))),
    "bag_max_2d": (lambda T, a, w: F(T).embedding_bag(a, w, mode="max"),
                   lambda: (NoGrad(torch.tensor([[0, 1, 2], [3, 4, 5]])), torch.randn(6, 3))),
    "bag_offsets_mean": (lambda T, a, w, o: F(T).embedding_bag(a, w, o),
                         lambda: (NoGrad(idx((7,), 6)), torch.randn(6, 3), NoGrad(torch.tensor([0, 2, 2, 5])))),
    "bag_offsets_sum_psw": (lambda T, a, w, o, p: F(T).embedding_bag(a, w, o, mode="sum", per_sample_weights=p),
                            lambda: (NoGrad(idx((6,), 5)), torch.randn(5, 2), NoGrad(torch.tensor([0, 1, 4])),
                                     torch.randn(6))),
    "bag_offsets_max": (lambda T, a, w, o: F(T).embedding_bag(a, w, o, mode="max"),
                        lambda: (NoGrad(torch.tensor([0, 3, 1, 4, 2])), torch.randn(5, 3),
                                 NoGrad(torch.tensor([0, 2, 2])))),
    "bag_last_offset": (lambda T, a, w, o: F(T).embedding_bag(a, w, o, mode="sum", include_last_offset=True),
                        lambda: (NoGrad(idx((6,), 5)), torch.randn(5, 2), NoGrad(torch.tensor([0, 2, 3, 6])))),
    "bag_padding_mean": (lambda T, a, w, o: F(T).embedding_bag(a, w, o, padding_idx=1),
                         lambda: (NoGrad(torch.tensor([1, 2, 1, 1, 3])), torch.randn(4, 3),
                                  NoGrad(torch.tensor([0, 2, 4])))),
    "bag_padding_max": (lambda T, a, w, o: F(T).embedding_bag(a, w, o, mode="max", padding_idx=0),
                        lambda: (NoGrad(torch.tensor([0, 2, 0, 1, 3])), torch.randn(4, 3),
                                 NoGrad(torch.tensor([0, 2, 3])))),
}


@pytest.mark.parametrize("name", sorted(GRAD))
def test_embedding_backward(device, name):
    fn, inputs = GRAD[name]
    run_case(device, fn, inputs, rtol=1e-4, atol=1e-5)
