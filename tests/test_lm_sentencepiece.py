"""SentencePiece-style BPE tokenizers (Llama 2, TinyLlama, Mistral) against the `tokenizers`
package: a vocabulary and merges trained here with tokenizers on text whose rarer characters stay
out of the alphabet (so they need byte fallback), laid out as tokenizer.json files of the three
shapes published checkpoints have (Llama 2's Prepend + Replace normalizer with a Strip decoder;
Metaspace pre-tokenizers with prepend_scheme "first" and "always", split or not), with the 256
<0xNN> byte tokens at ids 3..258 as Llama's vocabulary has them. Ours must give tokenizers' ids
and decoded text; a TinyLlama-style checkpoint directory loads with its own tokenizer and
generates a padded batch as transformers does."""

import json

import pytest

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import AddedToken, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402

from torchweb.models import Tokenizer  # noqa: E402

SP = "\u2581"
CORPUS = [
    "The quick brown fox jumps over the lazy dog. Hello world, hello there!",
    "Once upon a time, there was a little girl named Lily. She liked to play outside.",
    "def forward(self, x):\n    return x + 1  # residual\n\tindented",
    "numbers 0 12 345 6789 and punctuation: (a) [b] {c} <d> ... !? ;",
    "café naïve élève",
] * 20

SAMPLES = [
    "Hello world", " leading space", "  two leading spaces", "trailing space ", "multiple   inner    spaces",
    "new\nlines\n\n\nand\r\nwindows\tand tabs", "", " ", "\n", "   ", "café naïve", "Straße Ελληνικά русский",
    "日本語のテキスト 中文", "emoji 🙂🚀👩‍👩‍👧 zwj", "a literal \u2581 metaspace and \u2581\u2581 two",
    "<s>starts with bos", "mid <s> special </s> tokens", "</s>", "<unk> literal unk", "x<s>y",
    "unseen words: xylophone quizzically zephyr QQQ", "\u00a0nbsp\u3000ideographic\x1c sep",
    "combining e\u0301 and \ufb01 ligature", "Once upon a time, there was a little girl named Lily.",
]


def _trained():
    """(vocab, merges) in Llama's id layout: <unk>, <s>, </s>, the 256 byte tokens, then BPE's."""
    tok = tokenizers.Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend(SP), normalizers.Replace(" ", SP)])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SP, prepend_scheme="first", split=True)
    trainer = trainers.BpeTrainer(vocab_size=420, special_tokens=["<unk>", "<s>", "</s>"], limit_alphabet=60,
                                  show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    spec = json.loads(tok.to_str())["model"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    vocab.update({f"<0x{b:02X}>": 3 + b for b in range(256)})
    for t, _ in sorted(spec["vocab"].items(), key=lambda kv: kv[1]):
        vocab.setdefault(t, len(vocab))
    return vocab, [tuple(m) for m in spec["merges"]]


def _bpe(byte_fallback=True):
    vocab, merges = _trained()
    tok = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>",
                                          byte_fallback=byte_fallback, fuse_unk=True))
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in ("<unk>", "<s>", "</s>")])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B",
                                                       special_tokens=[("<s>", 1)])
    return tok


def _legacy():
    """Llama 2 / TinyLlama / Mistral 7B v0.1's tokenizer.json."""
    tok = _bpe()
    tok.normalizer = normalizers.Sequence([normalizers.Prepend(SP), normalizers.Replace(" ", SP)])
    tok.decoder = decoders.Sequence([decoders.Replace(SP, " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    return tok


def _metaspace_first():
    """transformers' newer conversion (Mistral v0.3 style): Metaspace, prepend_scheme "first"."""
    tok = _bpe()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SP, prepend_scheme="first", split=False)
    tok.decoder = decoders.Sequence([decoders.Metaspace(replacement=SP, prepend_scheme="first", split=False),
                                     decoders.ByteFallback(), decoders.Fuse()])
    return tok


def _metaspace_always_split():
    tok = _bpe()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SP, prepend_scheme="always", split=True)
    tok.decoder = decoders.Sequence([decoders.ByteFallback(),
                                     decoders.Metaspace(replacement=SP, prepend_scheme="always")])
    return tok


def _no_fallback():
    """Without byte fallback: characters outside the vocabulary become one fused <unk>."""
    tok = _bpe(byte_fallback=False)
    tok.normalizer = normalizers.Sequence([normalizers.Prepend(SP), normalizers.Replace(" ", SP)])
    tok.decoder = decoders.Sequence([decoders.Replace(SP, " "), decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    return tok


MAKERS = {"legacy": _legacy, "metaspace_first": _metaspace_first, "metaspace_always_split": _metaspace_always_split,
          "no_fallback": _no_fallback}


@pytest.fixture(scope="module", params=list(MAKERS))
def pair(request):
    """(tokenizers' Tokenizer, ours) for one layout."""
    ref = MAKERS[request.param]()
    return ref, Tokenizer.from_str(ref.to_str())


def test_ids_match_tokenizers(pair):
    ref, ours = pair
    for text in SAMPLES:
        for special in (True, False):
            want = ref.encode(text, add_special_tokens=special).ids
            assert ours.encode(text, add_special_tokens=special) == want, (text, special)


def test_byte_fallback_is_exercised():
    ref = _legacy()
    ids = ref.encode("日本語 🙂").ids
    assert sum(3 <= i < 259 for i in ids) >= 10           # the characters are spelled in bytes
    assert Tokenizer.from_str(ref.to_str()).encode("日本語 🙂") == ids


def test_decode_matches_tokenizers_and_round_trips(pair):
    ref, ours = pair
    for text in SAMPLES + CORPUS[:5]:
        ids = ref.encode(text).ids
        for skip in (True, False):
            assert ours.decode(ids, skip_special_tokens=skip) == ref.decode(ids, skip_special_tokens=skip), (text, skip)
    for text in ("Hello world", "  two leading spaces", "new\nlines\n\nand\ttabs ", "日本語 🙂 café"):
        ids = ours.encode(text)
        if ref.decode(ids) == text:              # where tokenizers round-trips, ours does too
            assert ours.decode(ids) == text


def test_odd_ids_decode_as_tokenizers(pair):
    """Byte tokens that are not UTF-8, a lone metaspace first, specials between bytes."""
    ref, ours = pair
    v = ref.get_vocab()
    cases = [[v["<0xE6>"], v["<0x97>"]], [v["<0x41>"], v["<0xFF>"], v["<s>"], v["<0xC3>"], v["<0xA9>"]],
             [v[SP], v[SP], v["<0x41>"]], [v["<s>"], v[SP], v["<unk>"], v["</s>"]]]
    for ids in cases:
        for skip in (True, False):
            assert ours.decode(ids, skip_special_tokens=skip) == ref.decode(ids, skip_special_tokens=skip), ids


def test_stream_decoding(pair):
    ref, ours = pair
    for text in ("Hello world café", "日本語 🙂 done", "  spaces\nand lines"):
        ids = ours.encode(text)
        stream = ours.stream()
        assert "".join([stream.feed(i) for i in ids] + [stream.flush()]) == ref.decode(ids)


def test_unsupported_layouts_say_so():
    spec = json.loads(_legacy().to_str())
    spec["decoder"] = {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": True}
    with pytest.raises(NotImplementedError, match="CTC"):
        Tokenizer.from_str(json.dumps(spec))
    spec = json.loads(_legacy().to_str())
    spec["model"]["dropout"] = 0.1
    with pytest.raises(NotImplementedError, match="dropout"):
        Tokenizer.from_str(json.dumps(spec))


@pytest.mark.parametrize("add_bos, add_eos", [(True, False), (False, True), (True, True)])
def test_add_bos_and_eos_token_from_tokenizer_config(tmp_path, add_bos, add_eos):
    """tokenizer_config.json's add_bos_token / add_eos_token rebuild the template, as Llama's
    tokenizers in transformers 4 rebuilt the post-processor from them."""
    ref = _legacy()
    ref.save(str(tmp_path / "tokenizer.json"))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "LlamaTokenizer", "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
        "add_bos_token": add_bos, "add_eos_token": add_eos}))
    template = " ".join((["<s>"] if add_bos else []) + ["$A"] + (["</s>"] if add_eos else []))
    ref.post_processor = processors.TemplateProcessing(single=template, special_tokens=[("<s>", 1), ("</s>", 2)])
    ours = Tokenizer.from_pretrained(tmp_path)
    for text in SAMPLES:
        assert ours.encode(text) == ref.encode(text).ids


def test_tinyllama_style_checkpoint_with_its_tokenizer(tmp_path, device):
    """A checkpoint directory as TinyLlama's (config.json, model.safetensors, tokenizer.json,
    tokenizer_config.json) loads with its own tokenizer; a left-padded batch of its ids
    generates as transformers' LlamaForCausalLM does."""
    torch = pytest.importorskip("torch")
    from lm_oracle import hf_model
    from torchweb.models import from_pretrained, generate
    ref_tok = _legacy()
    ref_tok.save(str(tmp_path / "tokenizer.json"))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "LlamaTokenizer", "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
        "pad_token": None, "add_bos_token": True, "add_eos_token": False, "padding_side": "right",
        "model_max_length": 2048, "legacy": False}))
    hf = hf_model("llama", seed=1, vocab_size=ref_tok.get_vocab_size(), bos_token_id=1, eos_token_id=2)
    hf.save_pretrained(tmp_path)
    model, tok = from_pretrained(tmp_path, device=device), Tokenizer.from_pretrained(tmp_path)
    tok.pad_token, tok.padding_side = tok.eos_token, "left"          # what people set for batches
    texts = ["Once upon a time", "日本語 🙂 and café", "Hi"]
    batch = tok(texts, padding=True, return_tensors="pt")
    width = max(len(ref_tok.encode(t).ids) for t in texts)
    ids = [ref_tok.encode(t).ids for t in texts]
    assert batch.input_ids.tolist() == [[2] * (width - len(i)) + i for i in ids]
    out = generate(model, **batch.to(device), max_new_tokens=8, greedy=True, compile=False,
                   pad_token_id=tok.pad_token_id)
    with torch.no_grad():
        want = hf.generate(torch.tensor(batch.input_ids.tolist()), max_new_tokens=8, do_sample=False,
                           attention_mask=torch.tensor(batch.attention_mask.tolist()), pad_token_id=2,
                           eos_token_id=None)
    assert out.tolist() == want.tolist()
    for row in out.tolist():
        assert tok.decode(row) == ref_tok.decode(row)
