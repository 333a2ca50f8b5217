"""torchweb.vision.models and utils against the real torchvision: the same state_dict keys and
shapes, torchvision's checkpoints (its state_dict, saved with torch.save) loaded unchanged, and
its logits on the same input; make_grid's image."""

import os

import pytest

from torchvision_ref import served, tv  # noqa: F401  (served: a fixture)
import torch
import torchweb
from oracle import assert_close, ours

from torchweb.vision import models, utils


def _their_model(name, **kw):
    """torchvision's model with every parameter and running statistic randomized, so the logits
    depend on all of them (default BatchNorm statistics and MobileNet's 0.01 head give ~1e-9)."""
    torch.manual_seed(0)
    m = getattr(tv.models, name)(**kw).eval()
    with torch.no_grad():
        for k, v in m.state_dict().items():
            if k.endswith("running_var"):
                v.uniform_(0.5, 1.5)
            elif v.is_floating_point():
                v.normal_(0, 0.3 if v.ndim <= 1 else (2.0 / v[0].numel()) ** 0.5)
    return m


_VIT = dict(image_size=16, patch_size=8, num_layers=2, num_heads=2, hidden_dim=8, mlp_dim=16)


@pytest.mark.parametrize("name,kw,size", [("resnet18", {}, 24), ("mobilenet_v2", {}, 24),
                                          ("mobilenet_v3_small", {}, 24), ("efficientnet_b0", {}, 32),
                                          ("VisionTransformer", _VIT, 16),
                                          ("VisionTransformer", dict(_VIT, representation_size=6), 16)],
                         ids=["resnet18", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0", "vit", "vit_pre_logits"])
def test_checkpoint_loads_and_gives_torchvisions_logits(name, kw, size, device, tmp_path):
    ref = _their_model(name, num_classes=10, **kw)
    path = str(tmp_path / f"{name}.pth")
    torch.save(ref.state_dict(), path)
    mine = getattr(models, name)(num_classes=10, **kw)
    assert [(k, tuple(v.shape)) for k, v in mine.state_dict().items()] == \
           [(k, tuple(v.shape)) for k, v in ref.state_dict().items()]
    mine.load_state_dict(torchweb.load(path, map_location=device))
    mine.to(device).eval()
    x = torch.randn(2, 3, size, size, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = ref(x)
    with torchweb.no_grad():
        got = mine(ours(x, device))
    assert_close(got, expected, rtol=1e-4, atol=1e-4 * expected.abs().max().item())


def test_weights_download_through_the_hub_with_the_hash_check(served, tmp_path, monkeypatch):
    """mobilenet_v2(weights=...) fetches the enum's URL through torchweb.hub into its cache,
    checks the sha256 prefix the file name carries, and gives torchvision's logits."""
    import hashlib
    www, url = served
    ref = _their_model("mobilenet_v2")
    torch.save(ref.state_dict(), str(www / "tmp.pth"))
    digest = hashlib.sha256((www / "tmp.pth").read_bytes()).hexdigest()
    (www / "tmp.pth").rename(www / f"mobilenet_v2-{digest[:8]}.pth")
    weights = models.MobileNet_V2_Weights.IMAGENET1K_V2
    monkeypatch.setattr(weights.value, "url", f"{url}mobilenet_v2-{digest[:8]}.pth")
    monkeypatch.setattr(torchweb.hub, "_hub_dir", [str(tmp_path / "hub")])
    mine = models.mobilenet_v2(weights=weights, progress=False).eval()
    assert os.path.isfile(tmp_path / "hub" / "checkpoints" / f"mobilenet_v2-{digest[:8]}.pth")
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        expected = ref(x)
    with torchweb.no_grad():
        got = mine(ours(x, str(mine.classifier[1].weight.device).split(":")[0]))
    assert_close(got, expected, rtol=1e-4, atol=1e-4 * expected.abs().max().item())
    monkeypatch.setattr(weights.value, "url", f"{url}mobilenet_v2-{'0' * 8}.pth")
    os.link(www / f"mobilenet_v2-{digest[:8]}.pth", www / f"mobilenet_v2-{'0' * 8}.pth")
    with pytest.raises(RuntimeError, match="invalid hash value"):
        models.mobilenet_v2(weights=weights, progress=False)


def test_training_mode_forward_and_backward_match(device):
    """Train mode (batch statistics, running stats updated, dropout off) and the gradients, on a
    narrow MobileNetV3 (BatchNorm, Hardswish, squeeze-excitation, residuals)."""
    ref = _their_model("mobilenet_v3_small", width_mult=0.25, num_classes=5, dropout=0.0).train()
    mine = models.mobilenet_v3_small(width_mult=0.25, num_classes=5, dropout=0.0)
    mine.load_state_dict({k: ours(v, device) for k, v in ref.state_dict().items()})
    mine.to(device).train()
    x = torch.randn(4, 3, 32, 32, generator=torch.Generator().manual_seed(2))
    ref(x).sum().backward()
    mine(ours(x, device)).sum().backward()
    for name in ("features.0.0.weight", "features.1.block.0.1.weight", "classifier.3.weight"):
        g_ref = ref.get_parameter(name).grad
        assert_close(mine.get_parameter(name).grad, g_ref, rtol=1e-3, atol=1e-3 * g_ref.abs().max().item())
    assert_close(mine.features[0][1].running_var, ref.features[0][1].running_var, rtol=1e-4, atol=1e-5)


def test_builders_and_weights_enums_are_torchvisions():
    mine, ref = models.resnet50(num_classes=3), tv.models.resnet50(num_classes=3)   # the Bottleneck blocks
    assert [(k, tuple(v.shape)) for k, v in mine.state_dict().items()] == \
           [(k, tuple(v.shape)) for k, v in ref.state_dict().items()]
    for kw in (dict(reduced_tail=True, dilated=True, width_mult=0.75), {}):
        mine, ref = models.mobilenet_v3_large(**kw), tv.models.mobilenet_v3_large(**kw)
        assert [(k, tuple(v.shape)) for k, v in mine.state_dict().items()] == \
               [(k, tuple(v.shape)) for k, v in ref.state_dict().items()]
    for enum in ("ResNet18_Weights", "ResNet34_Weights", "ResNet50_Weights", "MobileNet_V2_Weights",
                 "MobileNet_V3_Large_Weights", "MobileNet_V3_Small_Weights", "ViT_B_16_Weights", "ViT_B_32_Weights",
                 "ViT_L_16_Weights", "ViT_L_32_Weights", "ViT_H_14_Weights",
                 *(f"EfficientNet_B{i}_Weights" for i in range(8))):
        mine, ref = getattr(models, enum), getattr(tv.models, enum)
        assert [w.name for w in mine] == [w.name for w in ref]
        assert [w.url for w in mine] == [w.url for w in ref] and mine.DEFAULT.name == ref.DEFAULT.name
        assert [w.meta["num_params"] for w in mine] == [w.meta["num_params"] for w in ref]
        assert [w.meta["min_size"] for w in mine] == [w.meta["min_size"] for w in ref]
        for a, b in zip(mine, ref):   # each preset transform as torchvision's (sizes, interpolation)
            p, q = a.transforms(), b.transforms()
            assert (p.crop_size, p.resize_size, p.interpolation.value) == \
                   (q.crop_size, q.resize_size, q.interpolation.value)
    assert models.ResNet18_Weights.verify("IMAGENET1K_V1") is models.ResNet18_Weights.IMAGENET1K_V1
    with pytest.raises(TypeError):
        models.resnet18(weights=models.MobileNet_V2_Weights.IMAGENET1K_V1)
    assert isinstance(models.get_model("resnet18", num_classes=3), models.ResNet)


def test_weights_preset_transform_matches_torchvision(device):
    x = torch.rand(3, 40, 50, generator=torch.Generator().manual_seed(3))
    mine = models.ResNet18_Weights.IMAGENET1K_V1.transforms(crop_size=24, resize_size=30)
    ref = tv.models.ResNet18_Weights.IMAGENET1K_V1.transforms(crop_size=24, resize_size=30)
    assert_close(mine(ours(x, device)), ref(x))


@pytest.mark.parametrize("kw", [{}, dict(nrow=2, padding=1, normalize=True), dict(pad_value=0.5),
                                dict(normalize=True, scale_each=True, value_range=(0.2, 0.8))])
def test_make_grid_matches_torchvision(kw, device):
    x = torch.rand(5, 1, 6, 7, generator=torch.Generator().manual_seed(4))
    assert_close(utils.make_grid(ours(x, device), **kw), tv.utils.make_grid(x, **kw))
    rgb = torch.rand(3, 3, 4, 4)
    assert_close(utils.make_grid([ours(t, device) for t in rgb], nrow=3), tv.utils.make_grid(list(rgb), nrow=3))
    assert_close(utils.make_grid(ours(rgb[0], device)), tv.utils.make_grid(rgb[0]))


def test_stochastic_depth_drops_whole_rows_in_training(device):
    from torchweb.vision.models.efficientnet import StochasticDepth
    torchweb.manual_seed(0)
    x = torchweb.ones(400, 3, 2, 2, device=device)
    sd = StochasticDepth(0.25, "row")
    rows = sd(x).reshape(400, -1).tolist()
    assert all(len(set(r)) == 1 and (r[0] == 0.0 or abs(r[0] - 1 / 0.75) < 1e-6) for r in rows)   # whole rows
    kept = sum(r[0] > 0 for r in rows) / 400
    assert 0.65 < kept < 0.85
    assert torchweb.equal(sd.eval()(x), x)
    with pytest.raises(ValueError):
        StochasticDepth(1.5, "row")


def test_fresh_weights_follow_torchvisions_init():
    """weights=None: the init schemes of torchvision (by statistics: generators differ)."""
    torchweb.manual_seed(0)
    m = models.mobilenet_v2(num_classes=500)
    w = m.classifier[1].weight
    assert abs(w.std().item() - 0.01) < 0.001 and m.classifier[1].bias.abs().max().item() == 0
    conv = m.features[18][0].weight                      # 1x1, 320 -> 1280: kaiming fan_out
    assert abs(conv.std().item() - (2.0 / 1280) ** 0.5) < 0.1 * (2.0 / 1280) ** 0.5
    assert m.features[0][1].weight.min().item() == 1 and m.features[0][1].bias.abs().max().item() == 0
    e = models.efficientnet_b0(num_classes=400)
    bound = 1 / 400 ** 0.5
    assert e.classifier[1].weight.abs().max().item() <= bound and e.classifier[1].weight.abs().max().item() > 0.9 * bound
    v = models.VisionTransformer(image_size=16, patch_size=8, num_layers=1, num_heads=2, hidden_dim=64, mlp_dim=256)
    assert v.heads.head.weight.abs().max().item() == 0
    assert abs(v.encoder.pos_embedding.std().item() - 0.02) < 0.004
    lim = (6 / (64 + 256)) ** 0.5                        # the MLP's xavier_uniform
    assert v.encoder.layers[0].mlp[0].weight.abs().max().item() <= lim
