"""torchweb.models.Tokenizer against the `tokenizers` package: BPE vocabularies trained here with
tokenizers (GPT-2's ByteLevel pre-tokenizer; Llama 3's regex Split with ignore_merges and a BOS
template; SmolLM's Digits), saved as tokenizer.json (and GPT-2's vocab.json + merges.txt), read
by ours; the ids of varied text must be tokenizers' ids, and decoding must give tokenizers' text."""

import json

import pytest

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402

import torchweb  # noqa: E402
from torchweb.models import Tokenizer  # noqa: E402

LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")

CORPUS = [
    "The quick brown fox jumps over the lazy dog. It's 12:45 and we've got 3,141,592 reasons.",
    "def forward(self, x):\n    return self.proj(x) + 1e-5  # residual\n\n\tindented\ttabs",
    "Élève, naïve café; Straße; Ελληνικά; русский текст; 日本語のテキスト; 中文 一二三; 한국어",
    "emoji 🙂🚀 and  double  spaces   and trailing   ",
    "numbers 0 00 000 0000 123456789 ²³ ½ Ⅻ ٣٤٥ and I'M, you'LL, they'D",
    "<|endoftext|>special tokens<|endoftext|> in the middle",
] * 20

SAMPLES = [
    "Hello world", " leading space", "trailing space ", "  two leading", "multiple   inner    spaces",
    "new\nlines\n\n\nand\r\nwindows", "tabs\tand\u00a0nbsp\u3000ideographic\x1cfile sep",
    "It's I'm we're they've I'll he'd IT'S", "12345678901234567890 3.14159 -42 1,000,000 ²³ ½ Ⅻ ٣٤٥ 一二三",
    "Élève naïve café Straße Ελληνικά русский 日本語 中文 한국어", "🙂🚀👩‍👩‍👧 emoji zwj",
    "unseen words: xylophone quizzically zephyr", "punctuation!!! ??? ... --- ((( ))) {}[]<>",
    "code: for i in range(10): print(i**2)  # comment", "<|endoftext|>", "a<|endoftext|>b<|endoftext|>",
    "", " ", "\n", "mixed123abc456DEF", "combining: e\u0301 a\u0308 n\u0303", "\u200bzero width\ufeffbom",
    "compatibility: \ufb01 \u2460 \uff21\uff22 \u00bd \u212b \u0130stanbul",
]


def _train(pre_tokenizer, ignore_merges=False):
    tok = tokenizers.Tokenizer(models.BPE(ignore_merges=ignore_merges))
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<|endoftext|>", "<|begin_of_text|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def _gpt2():
    return _train(pre_tokenizers.ByteLevel(add_prefix_space=False))


def _llama3():
    tok = _train(pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(LLAMA3_PATTERN), "isolated"),
                                          pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]),
                 ignore_merges=True)
    bos = tok.token_to_id("<|begin_of_text|>")
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|begin_of_text|> $A", special_tokens=[("<|begin_of_text|>", bos)])])
    return tok


def _smollm():
    return _train(pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                           pre_tokenizers.ByteLevel(add_prefix_space=False)]))


def _prefix_space():
    return _train(pre_tokenizers.ByteLevel(add_prefix_space=True))


def _nfc():
    """Qwen2's shape: an NFC normalizer before the regex split."""
    tok = _llama3()
    tok.normalizer = normalizers.NFC()
    return tok


def _nfkc_lower():
    tok = _gpt2()
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    return tok


MAKERS = {"gpt2": _gpt2, "llama3": _llama3, "smollm": _smollm, "prefix_space": _prefix_space, "nfc": _nfc,
          "nfkc_lower": _nfkc_lower}


@pytest.fixture(scope="module", params=list(MAKERS))
def pair(request):
    ref = MAKERS[request.param]()
    return ref, Tokenizer.from_str(ref.to_str())


@pytest.mark.parametrize("text", SAMPLES)
def test_ids_match_tokenizers(pair, text):
    ref, ours = pair
    for special in (True, False):
        assert ours.encode(text, add_special_tokens=special) == ref.encode(text, add_special_tokens=special).ids


def test_decode_round_trip(pair):
    ref, ours = pair
    for text in SAMPLES + CORPUS[:6]:
        ids = ref.encode(text).ids
        for skip in (True, False):
            assert ours.decode(ids, skip_special_tokens=skip) == ref.decode(ids, skip_special_tokens=skip)
        if "<|endoftext|>" not in text and ours.pre_tokenizer.steps[-1][1] is False and ours.normalize is None:
            assert ours.decode(ids) == text


def test_stream_decoding_splits_characters_right(pair):
    ref, ours = pair
    text = "日本語 🙂 café"
    ids = ours.encode(text, add_special_tokens=False)
    stream = ours.stream()
    pieces = [stream.feed(i) for i in ids] + [stream.flush()]
    assert "".join(pieces) == ref.decode(ids)
    assert "\ufffd" not in "".join(pieces)


def test_gpt2_vocab_and_merges_files():
    ref = _gpt2()
    spec = json.loads(ref.to_str())
    vocab = json.dumps(spec["model"]["vocab"])
    merges = "#version: 0.2\n" + "\n".join(" ".join(m) if isinstance(m, list) else m for m in spec["model"]["merges"])
    ours = Tokenizer.from_vocab_merges(vocab, merges)
    for text in SAMPLES:
        assert ours.encode(text) == ref.encode(text).ids


def test_from_pretrained_directory(tmp_path):
    ref = _llama3()
    ref.save(str(tmp_path / "tokenizer.json"))
    ours = Tokenizer.from_pretrained(tmp_path)
    assert ours.encode("Hello world 123") == ref.encode("Hello world 123").ids


def test_bad_input():
    ours = Tokenizer.from_str(_gpt2().to_str())
    with pytest.raises(TypeError):
        ours.encode(b"bytes")
    with pytest.raises(IndexError):
        ours.decode([10 ** 6])
    spec = json.loads(_gpt2().to_str())
    spec["model"]["type"] = "WordPiece"
    with pytest.raises(NotImplementedError, match="WordPiece"):
        Tokenizer.from_str(json.dumps(spec))


BATCH = ["Hello world", "a much longer sentence with   spaces and 123 numbers", "", "日本語 🙂"]


def _hf_fast(ref, **kw):
    from lm_oracle import transformers
    return transformers().PreTrainedTokenizerFast(tokenizer_object=ref, **kw)


@pytest.mark.parametrize("side", ["left", "right"])
def test_padded_batch_matches_transformers(side):
    ref = _llama3()
    hf = _hf_fast(ref, pad_token="<|endoftext|>", padding_side=side)
    ours = Tokenizer.from_str(ref.to_str())
    ours.pad_token, ours.padding_side = "<|endoftext|>", side
    for kw in (dict(padding=True), dict(), dict(padding="max_length", max_length=20),
               dict(padding=True, truncation=True, max_length=5), dict(padding=True, add_special_tokens=False)):
        assert dict(ours(BATCH, **kw)) == dict(hf(BATCH, **kw)), kw
        assert dict(ours(BATCH[1], **kw)) == dict(hf(BATCH[1], **kw)), kw
    got, want = ours(BATCH, padding=True, return_tensors="pt"), hf(BATCH, padding=True, return_tensors="pt")
    assert got.input_ids.tolist() == want.input_ids.tolist()
    assert got["attention_mask"].tolist() == want["attention_mask"].tolist()
    assert got.input_ids.dtype == torchweb.long and tuple(got.input_ids.shape) == tuple(want.input_ids.shape)
    flipped = ours(BATCH, padding=True, padding_side="right" if side == "left" else "left")
    assert flipped == dict(hf(BATCH, padding=True, padding_side="right" if side == "left" else "left"))


def test_padding_needs_a_pad_token():
    ours = Tokenizer.from_str(_gpt2().to_str())
    with pytest.raises(ValueError, match="padding token"):
        ours(BATCH, padding=True)
    with pytest.raises(ValueError, match="padding=True"):
        ours(BATCH, return_tensors="pt")
    assert ours(BATCH[:1], padding=True)["input_ids"] == [ours.encode(BATCH[0])]    # nothing to pad


def test_tokenizer_config_from_directory(tmp_path):
    from lm_oracle import transformers
    ref = _llama3()
    ref.save(str(tmp_path / "tokenizer.json"))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<|begin_of_text|>",
        "eos_token": {"content": "<|endoftext|>", "__type": "AddedToken"}, "pad_token": "<|endoftext|>",
        "padding_side": "left", "model_max_length": 1000000000000000019884624838656}))
    hf = transformers().AutoTokenizer.from_pretrained(str(tmp_path))
    ours = Tokenizer.from_pretrained(tmp_path)
    assert (ours.pad_token_id, ours.eos_token_id, ours.bos_token_id, ours.padding_side) == \
        (hf.pad_token_id, hf.eos_token_id, hf.bos_token_id, hf.padding_side)
    assert dict(ours(BATCH, padding=True)) == dict(hf(BATCH, padding=True))
