"""The lookup in a packed weight (ops/packed_embedding.py, kernels/packed_embedding.py and its
numpy twin) and the tied embedding built on it after quantize_ (PackedEmbedding): the rows come
out exactly as PyTorch decodes them from the same bytes (int8 times the row's scale, bfloat16's
or float16's values), in the layer's dtype, on both devices, including past the binding limit."""

import pytest
import torch

import torchweb
from oracle import OUR_DTYPE, assert_close, fast_ours, ours
from test_binding_limit import lowered  # noqa: F401  (the fixture)
from torchweb.ao.quantization import bfloat16_weight_only, float16_weight_only, int8_weight_only, quantize_
from torchweb.ao.quantization.packed_embedding import PackedEmbedding
from torchweb.ops.packed_embedding import packed_embedding

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
HALVES = {"bfloat16": torch.bfloat16, "float16": torch.float16}   # the half packing formats' dtypes
FORMATS = {int8_weight_only: "int8", bfloat16_weight_only: "bfloat16", float16_weight_only: "float16"}


def _words(fmt, num, dim, seed):
    """(packed int32 words (num, ceil(dim / per)), scale or None) as torch tensors: int8 bytes
    over their whole range, half values of a normal draw; rows zero-padded to whole words."""
    g = torch.Generator().manual_seed(seed)
    per = 4 if fmt == "int8" else 2
    padded = -(-dim // per) * per
    if fmt == "int8":
        values = torch.randint(-128, 128, (num, padded), generator=g, dtype=torch.int8)
        scale = torch.rand(num, generator=g) * 0.1 + 1e-3
    else:
        values = torch.randn(num, padded, generator=g).to(HALVES[fmt])
        scale = None
    values[:, dim:] = 0
    return values.view(torch.int32), scale


def _decoded(words, scale, fmt, dim, dtype):
    """PyTorch's reading of the words: the int8 bytes (or the halves) of each row, in dtype."""
    if fmt == "int8":
        q = words.view(torch.int8)[:, :dim]
        return q.to(dtype) * scale.to(dtype)[:, None]
    return words.view(HALVES[fmt])[:, :dim].to(dtype)


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("fmt", ["int8", "bfloat16", "float16"])
@pytest.mark.parametrize("dim", [13, 64])
def test_rows_equal_pytorch_decoding_the_same_bytes(fmt, dim, dtype, device):
    words, scale = _words(fmt, 40, dim, seed=dim)
    idx = torch.tensor([[3, 0, 39, 3], [17, 17, 5, 22]])
    want = torch.nn.functional.embedding(idx, _decoded(words, scale, fmt, dim, DTYPES[dtype]))
    got = packed_embedding(ours(idx, device), ours(words, device),
                           None if scale is None else ours(scale.to(DTYPES[dtype]), device), dim, fmt,
                           OUR_DTYPE[DTYPES[dtype]])
    assert_close(got, want, rtol=0, atol=0)


@pytest.mark.parametrize("index", [[0, 40], [-1]])
def test_an_index_out_of_range_raises_index_error(index, device):
    words, scale = _words("int8", 40, 8, seed=1)
    with pytest.raises(IndexError):
        packed_embedding(torchweb.tensor(index, device=device), ours(words, device), ours(scale, device), 8,
                         "int8", torchweb.float32).tolist()


def test_bad_arguments_raise_clearly(device):
    words, scale = _words("int8", 10, 8, seed=2)
    w, s, i = ours(words, device), ours(scale, device), torchweb.tensor([1], device=device)
    with pytest.raises(ValueError, match="format"):
        packed_embedding(i, w, s, 8, "int4", torchweb.float32)
    with pytest.raises(RuntimeError, match="needs a scale"):
        packed_embedding(i, w, None, 8, "int8", torchweb.float32)
    with pytest.raises(RuntimeError, match="embedding_dim"):
        packed_embedding(i, w, s, 12, "int8", torchweb.float32)
    with pytest.raises(RuntimeError, match="indices"):
        packed_embedding(torchweb.tensor([1.0], device=device), w, s, 8, "int8", torchweb.float32)


@pytest.mark.parametrize("fmt", ["int8", "bfloat16"])
def test_a_table_past_the_binding_limit(fmt, device, lowered):  # noqa: F811
    words, scale = _words(fmt, 6000, 200, seed=3)     # 1.2 MB (int8) / 2.4 MB (bfloat16) of words
    idx = torch.tensor([5999, 0, 3001, 4500, 1, 5999])
    want = torch.nn.functional.embedding(idx, _decoded(words, scale, fmt, 200, torch.float32))
    got = packed_embedding(ours(idx, device), fast_ours(words, device),
                           None if scale is None else ours(scale, device), 200, fmt, torchweb.float32)
    assert_close(got, want, rtol=0, atol=0)
    lowered()


@pytest.mark.parametrize("config", list(FORMATS))
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_tied_embedding_is_the_dequantized_heads_rows(config, dtype, device):
    """quantize_ on a model whose lm_head is tied to its embedding: the embedding reads the head's
    packed words, and its rows are the head's dequantized weight's rows, as PyTorch decodes them."""
    class Tied(torchweb.nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = torchweb.nn.Embedding(50, 24)
            self.lm_head = torchweb.nn.Linear(24, 50, bias=False)
            self.lm_head.weight = self.wte.weight
    model = Tied().to(device).to(OUR_DTYPE[DTYPES[dtype]])
    quantize_(model, config())
    assert isinstance(model.wte, PackedEmbedding) and model.wte.weight is model.lm_head.weight
    head = model.lm_head
    words = torch.tensor(head.weight.tolist(), dtype=torch.int32)
    fmt = FORMATS[config]
    scale = torch.tensor(head.weight_scale.tolist(), dtype=DTYPES[dtype]) if fmt == "int8" else None
    idx = torch.tensor([[0, 49, 7], [7, 12, 3]])
    got = model.wte(ours(idx, device))
    assert_close(got, torch.nn.functional.embedding(idx, _decoded(words, scale, fmt, 24, DTYPES[dtype])),
                 rtol=0, atol=0)
