"""float16 weights: quantize_(model, float16_weight_only()) packs them two to a 32-bit word,
unpacked in the kernel with WGSL's core unpack2x16float (no 'shader-f16': Chrome on NVIDIA has
none), and float16 checkpoints (safetensors F16, config.json's dtype) load as float16 with
dtype="auto". PyTorch 2.13 (and transformers running its models) is the oracle, on both
devices; the adapter without 'shader-f16' (float16 held in f32 words) runs in a fresh
interpreter with TORCHWEB_NO_SHADER_F16=1.

Tolerances: float16 weights computed in float32 match PyTorch's float32 product with the
.half()-rounded weights within 1e-5 for a layer (tests/test_quantize_bfloat16.py's layer tests,
run for both half formats, gemv and tiled) and 1e-4 for a model's logits (float32 sums in
another order); a whole model in float16 matches transformers' float16 model (PyTorch's CPU
float16: float32 sums, each op's result rounded to half) within 2^-8 of the logits' largest
magnitude (measured: 2^-10 to 2^-9)."""

import copy
import functools
import io
import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import torchweb as tw
from lm_oracle import hf_model, transformers
from oracle import assert_close, ours, theirs
from test_quantize_bfloat16 import _pair   # (a PyTorch Linear and ours with its weights)
from torchweb.ao.quantization import (Float16WeightOnlyConfig, Float16WeightOnlyLinear, float16_weight_only,
                                      int8_weight_only, quantize_)
from torchweb.ao.quantization.packed_embedding import PackedEmbedding
from torchweb.models import from_pretrained, generate

IDS = [[3, 14, 15, 92, 65, 35, 89, 79, 32, 38, 46], [2, 71, 82, 81, 82, 8, 45, 90, 45, 23, 53]]
NEW = 8
# (Llama with an untied head: tests/test_lm_quantize.py's "f16" rows)
VARIANTS = {"gpt2": ("gpt2", {}), "llama_tied": ("llama", dict(tie_word_embeddings=True))}
SPECIAL = [1.0, -2.5, float("inf"), float("-inf"), float("nan"), 6e-8, -3e-5, 65504.0, 0.0, -0.0, 0.1]


# -- the layer --------------------------------------------------------------------------------

@pytest.mark.parametrize("m", [1, 3, 40])
def test_float16_activations_are_pytorchs_half_linear(device, m):
    """a float16 model's packed layer: float16 in and out, as PyTorch's CPU float16 Linear
    (float32 sums, the result rounded once): within PyTorch's float16 tolerance"""
    lin, ol = _pair(48, 80, device, seed=m)
    lin, ol = lin.half(), ol.half()
    layer = Float16WeightOnlyLinear.from_float(ol)
    x = torch.randn(m, 80, generator=torch.Generator().manual_seed(m)).half()
    with tw.no_grad():
        got = layer(ours(x, device))
    assert_close(got, lin(x).detach())


def test_packing_keeps_every_half_bit_pattern(device):
    """inf, NaN, subnormals, -0.0 and float16's largest value pack to PyTorch's bytes"""
    w = torch.tensor([SPECIAL, SPECIAL[::-1]]).half()
    layer = Float16WeightOnlyLinear.from_float(tw.nn.Linear(len(SPECIAL), 2, device=device))
    with tw.no_grad():
        layer._pack(ours(w, device))
    assert torch.equal(theirs(layer.weight).view(torch.int16)[:, :len(SPECIAL)], w.view(torch.int16))


def test_state_dict_is_the_half_matrix_and_loads_back(device):
    tw.manual_seed(0)
    model = tw.nn.Sequential(tw.nn.Linear(31, 64), tw.nn.ReLU(), tw.nn.Linear(64, 10)).to(device)
    w0 = theirs(model[0].weight)
    quantize_(model, float16_weight_only())
    assert isinstance(model[0], Float16WeightOnlyLinear) and tuple(model[0].weight.shape) == (64, 16)
    buf = io.BytesIO()
    tw.save(model.state_dict(), buf)
    buf.seek(0)
    back = torch.load(buf, weights_only=True)
    assert back["0.weight"].dtype == torch.int32 and torch.equal(back["0.weight"].view(torch.float16)[:, :31], w0.half())
    again = tw.nn.Sequential(tw.nn.Linear(31, 64), tw.nn.ReLU(), tw.nn.Linear(64, 10)).to(device)
    quantize_(again, float16_weight_only())
    buf.seek(0)
    again.load_state_dict(tw.load(buf))
    x = tw.randn(2, 31, device=device)
    with tw.no_grad():
        assert torch.equal(theirs(again(x)), theirs(model(x)))


def test_refusals(device):
    """unsupported modules, weight dtypes and configs, each with PyTorch's exception type; a
    refusal leaves the model unchanged"""
    model = tw.nn.Sequential(tw.nn.Linear(4, 4), tw.nn.Conv2d(1, 1, 3), tw.nn.Embedding(5, 4)).to(device)
    with pytest.raises(NotImplementedError, match=r"Float16WeightOnlyConfig\(\) applies to nn.Linear .* '1', a Conv2d"):
        quantize_(model, float16_weight_only(), filter_fn=lambda m, fqn: fqn in ("0", "1"))
    assert type(model[0]) is tw.nn.Linear            # (checked before anything was replaced)
    with pytest.raises(NotImplementedError, match="'2', a Embedding"):
        quantize_(model, float16_weight_only(), filter_fn=lambda m, fqn: fqn == "2")
    quantize_(model, int8_weight_only())
    with pytest.raises(NotImplementedError, match="'0', a Int8WeightOnlyLinear"):   # packed already
        quantize_(model, float16_weight_only(), filter_fn=lambda m, fqn: fqn == "0")
    with pytest.raises(TypeError, match="unsupported config .*float16_weight_only"):
        quantize_(model, torch.float16)
    odd = tw.nn.Sequential(tw.nn.Linear(4, 4))
    odd[0].weight = tw.nn.Parameter(tw.zeros(4, 4, dtype=tw.int32), requires_grad=False)
    with pytest.raises(RuntimeError, match="not implemented for 'Int' weights"):
        quantize_(odd, Float16WeightOnlyConfig())
    lin, ol = _pair(8, 6, device)
    layer = Float16WeightOnlyLinear.from_float(ol)
    with pytest.raises(RuntimeError, match="input must be float32, float16 or bfloat16, got torch.int32"):
        layer(tw.ones(2, 6, dtype=tw.int32, device=device))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        with tw.no_grad():
            layer(tw.ones(2, 7, device=device))
    with pytest.raises(NotImplementedError, match="no backward"):
        layer(tw.ones(2, 6, device=device, requires_grad=True))


# -- models and checkpoints ------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _saved(variant, root):
    """A float16 checkpoint as transformers writes it (F16 tensors, config.json `"dtype": "float16"`),
    and transformers' model loaded back from it (float16, dtype="auto" as ours)."""
    kind, overrides = VARIANTS[variant]
    path = os.path.join(root, variant)
    hf_model(kind, **overrides).half().save_pretrained(path)
    cls = transformers().GPT2LMHeadModel if kind == "gpt2" else transformers().LlamaForCausalLM
    return path, cls.from_pretrained(path).eval()


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return str(tmp_path_factory.mktemp("f16_checkpoints"))


def _logits(model, ids):
    with tw.no_grad():
        return torch.tensor(model(tw.tensor(ids, device=model.lm_head.weight.device)).float().tolist())


def _hf_greedy(ref):
    with torch.no_grad():
        return ref.generate(torch.tensor(IDS), max_new_tokens=NEW, do_sample=False, pad_token_id=0,
                            eos_token_id=None, min_new_tokens=NEW).tolist()


def _half_close(got, want):
    assert (got - want).abs().max() <= 2 ** -8 * want.abs().max(), (got - want).abs().max()


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_float16_checkpoint_stays_float16(variant, root, device):
    """dtype="auto": F16 tensors and config.json's dtype give a float16 model (f16 storage where
    the adapter has 'shader-f16'), computing as PyTorch's float16 model; greedy text identical"""
    path, ref = _saved(variant, root)
    with open(os.path.join(path, "config.json")) as f:
        assert json.load(f)["dtype"] == "float16"
    assert ref.dtype == torch.float16
    model = from_pretrained(path, device=device)
    assert model.lm_head.weight.dtype == model.get_input_embeddings().weight.dtype == tw.float16
    if device == "webgpu":
        assert tw.float16.gpu_storage == "f16"         # lavapipe has shader-f16: 2 bytes a weight
    want = torch.tensor(ref(torch.tensor(IDS)).logits.detach().float().tolist())
    _half_close(_logits(model, IDS), want)
    greedy = _hf_greedy(ref)
    assert generate(model, IDS, NEW, greedy=True, compile=False).tolist() == greedy
    if device == "webgpu":      # the captured decode step, replayed, in float16
        assert generate(model, IDS, NEW, greedy=True, compile=True).tolist() == greedy


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_quantized_float16_checkpoint_keeps_the_checkpoints_bytes(variant, root, device):
    """quantize_ on a float16 model packs its weights exactly (no float32 copy: the packed words
    are the checkpoint's F16 bytes), the tied embedding reads the head's words; then .float()
    computes in float32 with those weights: PyTorch's model with .half() weights in float32"""
    path, ref = _saved(variant, root)
    model = from_pretrained(path, device=device)
    quantize_(model, float16_weight_only())
    assert {p.dtype for p in model.parameters()} == {tw.float16}      # norms and biases; weights packed
    assert {b.dtype for n, b in model.named_buffers() if "inv_freq" not in n} <= {tw.int32, tw.float16}
    head = ref.lm_head.weight.detach()
    assert torch.equal(theirs(model.lm_head.weight).view(torch.float16)[:, :head.shape[1]], head)
    if model.config.tie_word_embeddings:
        assert isinstance(model.get_input_embeddings(), PackedEmbedding)
    greedy = _hf_greedy(ref)
    _half_close(_logits(model, IDS), torch.tensor(ref(torch.tensor(IDS)).logits.detach().float().tolist()))
    assert generate(model, IDS, NEW, greedy=True, compile=False).tolist() == greedy
    model.float()
    ref32 = copy.deepcopy(ref).float()
    assert {t.dtype for t in model.parameters()} == {tw.float32}
    assert_close(tw.tensor(_logits(model, IDS).tolist()), ref32(torch.tensor(IDS)).logits.detach(), rtol=1e-4, atol=1e-4)
    assert generate(model, IDS, NEW, greedy=True, compile=False).tolist() == _hf_greedy(ref32)
    if device == "webgpu":
        assert generate(model, IDS, NEW, greedy=True, compile=True).tolist() == _hf_greedy(ref32)


def test_config_dtype_decides_auto(root):
    """dtype="auto" takes config.json's dtype first (as transformers 5), its older name
    torch_dtype too; the weights' dtype where the config names none"""
    path, _ = _saved("gpt2", root)
    with open(os.path.join(path, "config.json")) as f:
        config = json.load(f)
    for field, value, want in (("dtype", "float32", tw.float32), ("torch_dtype", "bfloat16", tw.bfloat16),
                               ("dtype", None, tw.float16)):
        cfg = {k: v for k, v in config.items() if k not in ("dtype", "torch_dtype")}
        cfg[field] = value
        assert from_pretrained(path, device="cpu", config=cfg).lm_head.weight.dtype == want


def test_without_shader_f16(root):
    """the browser's case on a real GPU (Dawn reports no 'shader-f16'): a float16 checkpoint
    loads as float16 held in f32 words and generates transformers' greedy text; packed, the
    weights take 2 bytes again and the greedy text is the same; the packed layer's bytes are
    PyTorch's float16 matrix's"""
    path, ref = _saved("llama_tied", root)
    code = f"""
        import json, conftest, torchweb as tw
        from torchweb.models import from_pretrained, generate
        from torchweb.ao.quantization import quantize_, float16_weight_only
        model = from_pretrained({path!r}, device="webgpu")
        assert "shader-f16" not in tw.webgpu.features() and tw.float16.gpu_storage == "f32"
        out = dict(dtype=model.lm_head.weight.dtype.name)
        out["eager"] = generate(model, {IDS!r}, {NEW}, greedy=True, compile=False).tolist()
        quantize_(model, float16_weight_only())
        out["packed"] = generate(model, {IDS!r}, {NEW}, greedy=True, compile=False).tolist()
        out["compiled"] = generate(model, {IDS!r}, {NEW}, greedy=True, compile=True).tolist()
        with tw.no_grad():
            out["logits"] = model(tw.tensor({IDS!r}, device="webgpu")).float().tolist()
        out["head"] = model.lm_head.weight.tolist()
        print(json.dumps(out))
    """
    env = dict(os.environ, PYTHONPATH=os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "src")),
               TORCHWEB_NO_SHADER_F16="1")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                       timeout=300, cwd=os.path.dirname(__file__))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.splitlines()[-1])
    greedy = _hf_greedy(ref)
    assert got["dtype"] == "float16" and got["eager"] == got["packed"] == got["compiled"] == greedy
    head = ref.lm_head.weight.detach()
    assert torch.equal(torch.tensor(got["head"], dtype=torch.int32).view(torch.float16)[:, :head.shape[1]], head)
    _half_close(torch.tensor(got["logits"]), ref(torch.tensor(IDS)).logits.detach().float())
