"""nn.AdaptiveLogSoftmaxWithLoss against PyTorch's from the same state_dict: forward (output and
loss, batched and unbatched), gradients of input and every parameter, log_prob, predict,
constructor and forward errors."""

import pytest
import torch

import torchweb
from nn_layer_oracle import check_ctor_error, pair
from oracle import assert_close, make, ours


def _build(head_bias=False, cutoffs=(3, 7), div_value=2.0):
    return lambda nn: nn.AdaptiveLogSoftmaxWithLoss(8, 12, list(cutoffs), div_value=div_value,
                                                    head_bias=head_bias)


@pytest.mark.parametrize("head_bias", [False, True])
def test_forward_backward(device, head_bias):
    mine, ref = pair(_build(head_bias), device)
    x = make((6, 8))
    target = torch.tensor([0, 5, 11, 2, 8, 4])   # head, both clusters
    tx = x.clone().requires_grad_(True)
    wx = ours(x, device, requires_grad=True)
    e = ref(tx, target)
    g = mine(wx, ours(target, device))
    assert type(g).__name__ == "_ASMoutput" and g._fields == ("output", "loss")
    assert_close(g.output, e.output, rtol=1e-5, atol=1e-5)
    assert_close(g.loss, e.loss, rtol=1e-5, atol=1e-5)
    (e.loss * 2 + e.output.sum()).backward()
    (g.loss * 2 + g.output.sum()).backward()
    assert_close(wx.grad, tx.grad, rtol=1e-4, atol=1e-5)
    for (k, a), (_, b) in zip(mine.named_parameters(), ref.named_parameters()):
        assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5)


def test_only_head_targets_and_unbatched(device):
    mine, ref = pair(_build(), device)
    x = make((4, 8))
    target = torch.tensor([0, 1, 2, 1])
    e = ref(x, target)
    g = mine(ours(x, device), ours(target, device))
    assert_close(g.output, e.output)
    assert_close(g.loss, e.loss)
    e1 = ref(x[0], torch.tensor(9))
    g1 = mine(ours(x[0], device), torchweb.tensor(9, device=device))
    assert_close(g1.output, e1.output)
    assert_close(g1.loss, e1.loss)


def test_log_prob_and_predict(device):
    mine, ref = pair(_build(cutoffs=(2, 5), div_value=1.0), device)
    x = make((10, 8), low=-6, high=6)
    assert_close(mine.log_prob(ours(x, device)), ref.log_prob(x), rtol=1e-5, atol=1e-5)
    assert_close(mine.predict(ours(x, device)), ref.predict(x))
    # rows whose head argmax is a cluster token and rows whose is not, and all of one kind
    with torch.no_grad():
        ref.head.weight.zero_()
        ref.head.weight[3, 0] = 5.0
    mine.head.weight.data.copy_(ours(ref.head.weight.detach(), device))
    x2 = x.clone()
    x2[:, 0] = torch.tensor([1.0, -1.0] * 5)
    for inp in (x2, x2.abs()):
        assert_close(mine.predict(ours(inp, device)), ref.predict(inp))


@pytest.mark.parametrize("cutoffs", [[], [5, 3], [0, 4], [4, 12], [4, 4], [2.5]])
def test_ctor_errors(cutoffs):
    check_ctor_error(lambda nn: nn.AdaptiveLogSoftmaxWithLoss(8, 12, cutoffs))


@pytest.mark.parametrize("shape,target", [((3, 8), [0, 1]), ((2, 3, 8), [0, 1]), ((3, 8), [[0]]),
                                          ((8,), [1, 2]), ((2, 8), 1), ((2, 8), [0, 12]), ((2, 8), [-1, 0])])
def test_forward_errors(device, shape, target):
    mine, ref = pair(_build(), device)
    x = make(shape)
    t = torch.tensor(target)
    with pytest.raises(RuntimeError) as info:
        ref(x, t)
    with pytest.raises(RuntimeError) as mine_info:
        mine(ours(x, device), ours(t, device))
    assert str(mine_info.value) == str(info.value)
