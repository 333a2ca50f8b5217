# Layer modules (nn/modules: conv, batchnorm, normalization, instancenorm, sparse, pooling,
# padding, upsampling, fold, distance, shape layers): forward, input and parameter gradients,
# running statistics and reprs, with weights and inputs from formulas.
import math

import torch
import torch.nn as nn


def fill(m, k0=0):
    with torch.no_grad():
        for k, p in enumerate(m.parameters()):
            p.copy_(torch.tensor([math.cos(0.37 * i + 1.3 * (k + k0)) * 0.5
                                  for i in range(p.numel())]).reshape(p.shape))
    return m


def inp(*shape, s=0.0):
    n = math.prod(shape)
    return torch.tensor([math.sin(0.7 * i + s) + 0.1 * math.cos(1.9 * i) for i in range(n)]).reshape(shape)


def flat(t):
    return t.detach().flatten().tolist()


def fwd_bwd(m, *xs, **kwargs):
    xs = [x.clone().requires_grad_(True) if x.is_floating_point() else x for x in xs]
    out = m(*xs, **kwargs)
    first = out[0] if isinstance(out, tuple) else out
    (first * inp(*first.shape, s=1.0)).sum().backward()
    res = {"out": flat(first), "repr": repr(m),
           "grads": [flat(x.grad) for x in xs if x.is_floating_point()],
           "param_grads": [flat(p.grad) for p in m.parameters() if p.grad is not None]}
    if isinstance(out, tuple):
        res["indices"] = out[1].flatten().tolist()
    return res


result = {}

# a conv + batch norm + pool stack, two training steps then eval
stack = fill(nn.Sequential(
    nn.Conv2d(2, 4, 3, padding=1, padding_mode="reflect"), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(4, 4, 3, padding="same", groups=2), nn.GroupNorm(2, 4), nn.AvgPool2d(2, ceil_mode=True),
    nn.Flatten(), nn.Linear(16, 3)))
result["stack_train1"] = fwd_bwd(stack, inp(2, 2, 6, 8))
stack.zero_grad()
result["stack_train2"] = fwd_bwd(stack, inp(2, 2, 6, 8, s=0.5))
result["stack_bn"] = {k: flat(v) for k, v in stack[1].state_dict().items()}
result["stack_keys"] = list(stack.state_dict().keys())
stack.eval()
stack.zero_grad()
result["stack_eval"] = fwd_bwd(stack, inp(2, 2, 6, 8, s=2.0))

result["conv1d_circular"] = fwd_bwd(fill(nn.Conv1d(2, 3, 3, padding=2, padding_mode="circular", dilation=2)),
                                    inp(2, 2, 7))
result["conv3d"] = fwd_bwd(fill(nn.Conv3d(2, 2, 2, stride=(1, 2, 1), bias=False)), inp(1, 2, 3, 4, 3))
result["convT2d_output_size"] = fwd_bwd(fill(nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)), inp(2, 3, 3, 4),
                                        output_size=[6, 8])
result["convT1d_groups"] = fwd_bwd(fill(nn.ConvTranspose1d(4, 2, 3, stride=2, output_padding=1, groups=2)),
                                   inp(2, 4, 5))

bn = fill(nn.BatchNorm1d(3, momentum=None))
for step in range(3):
    out = bn(inp(4, 3, 2, s=step))
result["bn_cumulative"] = {"running_mean": flat(bn.running_mean), "running_var": flat(bn.running_var),
                           "tracked": int(bn.num_batches_tracked.item()), "out": flat(out)}
result["bn_no_stats_eval"] = fwd_bwd(fill(nn.BatchNorm2d(2, track_running_stats=False)).eval(), inp(2, 2, 3, 3))
inorm = fill(nn.InstanceNorm1d(3, affine=True, track_running_stats=True))
result["instance_norm"] = fwd_bwd(inorm, inp(2, 3, 5))
result["instance_norm_stats"] = [flat(inorm.running_mean), flat(inorm.running_var)]
result["layer_norm"] = fwd_bwd(fill(nn.LayerNorm([3, 4])), inp(2, 3, 4))
result["rms_norm"] = fwd_bwd(fill(nn.RMSNorm(4, eps=1e-5)), inp(3, 4))
result["lrn"] = fwd_bwd(nn.LocalResponseNorm(3, alpha=0.1), inp(2, 5, 3))

result["embedding"] = fwd_bwd(fill(nn.Embedding(6, 3, padding_idx=2)), torch.tensor([[1, 2, 2], [5, 0, 1]]))
result["embedding_bag"] = fwd_bwd(fill(nn.EmbeddingBag(5, 3, mode="sum")), torch.tensor([1, 2, 4, 4, 3, 0]),
                                  torch.tensor([0, 2, 2]))
pre = nn.Embedding.from_pretrained(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
result["from_pretrained"] = [flat(pre(torch.tensor([1, 0, 1]))), pre.weight.requires_grad]

pool = nn.MaxPool2d(2, stride=2, return_indices=True, ceil_mode=True)
result["maxpool_indices"] = fwd_bwd(pool, inp(1, 2, 5, 5))
pooled, idx = pool(inp(1, 2, 5, 5))
result["maxunpool"] = fwd_bwd(nn.MaxUnpool2d(2), pooled, idx, output_size=[5, 5])
result["adaptive_avg"] = fwd_bwd(nn.AdaptiveAvgPool2d((2, 3)), inp(2, 2, 5, 7))
result["adaptive_max"] = fwd_bwd(nn.AdaptiveMaxPool1d(3, return_indices=True), inp(2, 7))
result["lppool"] = fwd_bwd(nn.LPPool2d(2, 2), inp(1, 2, 4, 4).abs() + 0.5)
result["maxpool1d_dilated"] = fwd_bwd(nn.MaxPool1d(2, stride=1, dilation=2, padding=1), inp(2, 2, 6))

result["upsample_bilinear"] = fwd_bwd(nn.Upsample(scale_factor=2, mode="bilinear"), inp(1, 2, 3, 3))
result["upsampling_nearest"] = fwd_bwd(nn.UpsamplingNearest2d(size=(5, 4)), inp(1, 1, 2, 3))
result["pixel_shuffle"] = fwd_bwd(nn.PixelShuffle(2), inp(1, 8, 2, 3))
result["pixel_unshuffle"] = fwd_bwd(nn.PixelUnshuffle(2), inp(1, 2, 4, 2))
result["channel_shuffle"] = fwd_bwd(nn.ChannelShuffle(3), inp(1, 6, 2))
result["reflection_pad"] = fwd_bwd(nn.ReflectionPad2d((2, 1, 0, 2)), inp(1, 2, 3, 4))
result["replication_pad"] = fwd_bwd(nn.ReplicationPad1d(3), inp(2, 2, 3))
result["circular_pad"] = fwd_bwd(nn.CircularPad2d(1), inp(1, 2, 3, 3))
result["constant_pad3d"] = fwd_bwd(nn.ConstantPad3d((1, 0, 0, 1, 1, 0), 2.5), inp(1, 2, 2, 2))
result["zero_pad"] = fwd_bwd(nn.ZeroPad2d((-1, 2, 1, 0)), inp(2, 3, 4))
result["unfold"] = fwd_bwd(nn.Unfold((2, 3), padding=1, stride=2), inp(1, 2, 5, 6))
result["fold"] = fwd_bwd(nn.Fold((4, 5), 2), inp(2, 12, 12))
result["cosine"] = fwd_bwd(nn.CosineSimilarity(dim=1), inp(3, 4), inp(3, 4, s=1.0))
result["pairwise"] = fwd_bwd(nn.PairwiseDistance(p=1.0, keepdim=True), inp(3, 4), inp(1, 4, s=2.0))
result["unflatten"] = fwd_bwd(nn.Unflatten(1, (2, -1)), inp(3, 8))
result["dropout_eval"] = fwd_bwd(nn.Dropout2d(0.5).eval(), inp(2, 3, 2, 2))
