"""`from safetensors.torch import ...` under install_torch_alias() (torchweb.safetensors standing
in for the package), and the package-level API beyond bytes (safe_open, save_model/load_model
with tied weights), each against the real safetensors package on the host. The byte format
itself is compared in test_serialization.py."""

import json

import pytest

import torch
import torchweb
from fresh_python import run_fresh as _run
from oracle import assert_close, ours

safetensors_torch = pytest.importorskip("safetensors.torch")
import safetensors  # noqa: E402

def test_safetensors_torch_under_the_alias(tmp_path):
    tensors = {"w": torch.randn(3, 4), "i": torch.arange(6, dtype=torch.int64).reshape(2, 3),
               "h": torch.randn(5).half(), "b": torch.tensor([True, False])}
    safetensors_torch.save_file(tensors, str(tmp_path / "theirs.safetensors"), metadata={"k": "v"})
    out = _run("""
        import json, torchweb
        torchweb.install_torch_alias(safetensors=True)
        import torch
        from safetensors.torch import load_file, save_file, load, save
        from safetensors import safe_open
        import safetensors.torch as st
        assert st.__name__ == "torchweb.safetensors.torch", st.__name__
        t = load_file("theirs.safetensors")
        assert isinstance(t["w"], torch.Tensor)
        save_file({k: v * 2 if v.is_floating_point() else v for k, v in t.items()}, "ours.safetensors",
                  metadata={"k": "v"})
        again = load(save({"x": torch.ones(2, 2)}))
        with safe_open("theirs.safetensors", framework="pt") as f:
            keys, meta = list(f.keys()), f.metadata()
        print(json.dumps({"keys": keys, "meta": meta, "x": again["x"].tolist(),
                          "w": t["w"].tolist(), "i": t["i"].tolist()}))
    """, tmp_path)
    got = json.loads(out)
    assert got["keys"] == sorted(tensors) and got["meta"] == {"k": "v"} and got["x"] == [[1.0, 1.0]] * 2
    assert_close(torchweb.tensor(got["w"]), tensors["w"])
    assert got["i"] == tensors["i"].tolist()
    back = safetensors_torch.load_file(str(tmp_path / "ours.safetensors"))
    for k, v in tensors.items():
        expected = v * 2 if v.is_floating_point() else v
        assert back[k].dtype == expected.dtype and torch.equal(back[k], expected), k


def test_alias_leaves_an_installed_safetensors_alone(tmp_path):
    """The default (None): the real package, where installed, is imported as usual."""
    out = _run("""
        import torchweb
        from torchweb import _torch_alias
        torchweb.install_torch_alias()
        print(_torch_alias._finder.find_spec("safetensors") is None,
              _torch_alias._finder.find_spec("torchvision") is None)
        _torch_alias._real_installed = lambda name: False    # as in the page: nothing installed
        import safetensors.torch, torchvision
        print(safetensors.torch.__name__, torchvision.__name__)
        torchweb.uninstall_torch_alias()
        import sys
        print(any(n.partition(".")[0] in ("torch", "torchvision", "safetensors") for n in sys.modules))
    """, tmp_path)
    assert out.split() == ["True", "True", "torchweb.safetensors.torch", "torchweb.vision", "False"]


def test_safe_open_matches_the_package(tmp_path, device):
    path = str(tmp_path / "m.safetensors")
    safetensors_torch.save_file({"a": torch.randn(2, 3), "b": torch.arange(4)}, path, metadata={"m": "1"})
    with safetensors.safe_open(path, framework="pt") as theirs, \
            torchweb.safetensors.safe_open(path, framework="pt", device=device) as mine:
        assert sorted(mine.keys()) == sorted(theirs.keys()) and mine.metadata() == theirs.metadata()
        for k in theirs.keys():
            assert_close(mine.get_tensor(k), theirs.get_tensor(k))
        with pytest.raises(torchweb.safetensors.SafetensorError):
            mine.get_tensor("missing")


def _Tied(nn):
    """A module whose head shares the embedding's weight, in torch's or torchweb's nn."""
    m = nn.Module()
    m.emb = nn.Embedding(5, 3)
    m.head = nn.Linear(3, 5, bias=False)
    m.head.weight = m.emb.weight
    m.norm = nn.LayerNorm(3)
    return m


def test_save_model_and_load_model_with_tied_weights(tmp_path, device):
    torch.manual_seed(0)
    ref = _Tied(torch.nn)
    mine = _Tied(torchweb.nn)
    mine.load_state_dict({k: ours(v, device) for k, v in ref.state_dict().items()})
    safetensors_torch.save_model(ref, str(tmp_path / "theirs.safetensors"))
    torchweb.safetensors.save_model(mine, str(tmp_path / "ours.safetensors"))
    assert (tmp_path / "ours.safetensors").read_bytes() == (tmp_path / "theirs.safetensors").read_bytes()
    fresh = _Tied(torchweb.nn).to(device)
    missing, unexpected = torchweb.safetensors.load_model(fresh, str(tmp_path / "theirs.safetensors"), device=device)
    expected = safetensors_torch.load_model(_Tied(torch.nn), str(tmp_path / "theirs.safetensors"))
    assert (sorted(missing), sorted(unexpected)) == (sorted(expected[0]), sorted(expected[1]))
    assert fresh.head.weight is fresh.emb.weight
    assert_close(fresh.head.weight, ref.head.weight)
    with pytest.raises(RuntimeError, match="Missing key"):
        torchweb.safetensors.load_model(torchweb.nn.Linear(3, 3), str(tmp_path / "theirs.safetensors"))
