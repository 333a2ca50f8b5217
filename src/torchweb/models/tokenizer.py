"""A byte-level BPE tokenizer in pure Python that reads Hugging Face's tokenizer.json (GPT-2,
Llama 3, SmolLM, Qwen-style byte-level BPE) or GPT-2's vocab.json + merges.txt, and gives the
`tokenizers` package's ids for the same text (tests/test_lm_tokenizer.py checks that).

The pipeline is tokenizers': split out the added (special) tokens; pre-tokenize (Split by a
regex, Digits, ByteLevel with GPT-2's regex); map each piece's UTF-8 bytes to GPT-2's printable
characters (bytes_to_unicode); apply the BPE merges by rank; add the post-processor's special
tokens. Decoding maps the characters back to bytes. Standard library only."""

import codecs
import json
import os
import re
import unicodedata

from ..serialization.url_fetch import fetch_bytes, fetch_bytes_async, in_browser
from . import sentencepiece_bpe as sp
from .batch_encoding import encode_batch
from .unicode_regex import translate

GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


def bytes_to_unicode():
    """GPT-2's map from the 256 byte values to printable characters (bytes that are printable
    Latin-1 keep their character; the others are shifted past 255)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


_BYTE_CHAR = bytes_to_unicode()
_CHAR_BYTE = {c: b for b, c in _BYTE_CHAR.items()}


def _byte_level_text(tokens):
    """tokenizers' ByteLevel decoder: GPT-2's byte characters back to UTF-8 text."""
    return b"".join(bytes([_CHAR_BYTE[c]]) if c in _CHAR_BYTE else c.encode("utf-8")
                    for c in "".join(tokens)).decode("utf-8", errors="replace")


def _split(pieces, pattern, behavior="isolated", invert=False):
    """tokenizers' Split: each piece cut at the pattern's matches."""
    if invert or behavior not in ("isolated", "removed"):
        raise NotImplementedError(f"tokenizer: Split behavior {behavior!r} (invert={invert}) is not supported")
    out = []
    for piece in pieces:
        pos = 0
        for m in pattern.finditer(piece):
            if m.start() > pos:
                out.append(piece[pos:m.start()])
            if behavior == "isolated" and m.end() > m.start():
                out.append(m.group(0))
            pos = m.end()
        if pos < len(piece):
            out.append(piece[pos:])
    return out


def _digits(pieces, individual):
    """tokenizers' Digits: numeric characters split off (each alone, or runs together)."""
    out = []
    for piece in pieces:
        run, kind = "", None
        for ch in piece:
            num = unicodedata.category(ch)[0] == "N"      # Rust's char::is_numeric
            if run and (num != kind or (num and individual)):
                out.append(run)
                run = ""
            run, kind = run + ch, num
        if run:
            out.append(run)
    return out


class _PreTokenizer:
    """A chain of pre-tokenization steps from tokenizer.json's "pre_tokenizer"."""

    def __init__(self, spec):
        self.steps = []
        self._add(spec)
        self.byte_level = any(step[0] == "bytelevel" for step in self.steps)

    def _add(self, spec):
        if spec is None:
            return
        kind = spec["type"]
        if kind == "Sequence":
            for s in spec["pretokenizers"]:
                self._add(s)
        elif kind == "ByteLevel":
            regex = translate(GPT2_PATTERN) if spec.get("use_regex", True) else None
            self.steps.append(("bytelevel", spec.get("add_prefix_space", False), regex))
        elif kind == "Split":
            pattern = spec["pattern"]
            regex = translate(pattern["Regex"]) if "Regex" in pattern else re.compile(re.escape(pattern["String"]))
            self.steps.append(("split", regex, spec.get("behavior", "Isolated").lower(), spec.get("invert", False)))
        elif kind == "Digits":
            self.steps.append(("digits", spec.get("individual_digits", False)))
        elif kind == "Metaspace":
            scheme = spec.get("prepend_scheme", "always" if spec.get("add_prefix_space", True) else "never")
            self.steps.append(("metaspace", spec.get("replacement", sp.SPACE), scheme, spec.get("split", True)))
        else:
            raise NotImplementedError(f"tokenizer: pre_tokenizer {kind!r} is not supported "
                                      "(ByteLevel, Split, Digits, Metaspace, Sequence are)")

    def __call__(self, text, first=True):
        """The words of text (one segment between added tokens; first: it starts the text)."""
        pieces = [text]
        for step in self.steps:
            if step[0] == "split":
                pieces = _split(pieces, *step[1:])
            elif step[0] == "digits":
                pieces = _digits(pieces, step[1])
            elif step[0] == "metaspace":
                pieces = sp.metaspace(pieces, *step[1:], first)
            else:
                _, prefix, regex = step
                if prefix:
                    pieces = [p if p.startswith(" ") else " " + p for p in pieces]
                if regex is not None:
                    pieces = _split(pieces, regex)
        if not self.byte_level:            # SentencePiece-style: the characters as they are
            return pieces
        return ["".join(_BYTE_CHAR[b] for b in p.encode("utf-8")) for p in pieces]


def _normalizer(spec):
    """tokenizer.json's "normalizer" as a function of the text (Unicode forms, Lowercase)."""
    if spec is None:
        return None
    kind = spec["type"]
    if kind == "Sequence":
        steps = [_normalizer(s) for s in spec["normalizers"]]

        def apply(text):
            for step in steps:
                text = step(text)
            return text
        return apply
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return lambda text: unicodedata.normalize(kind, text)
    if kind == "Lowercase":
        return str.lower
    if kind == "Prepend":
        return sp.prepend_normalizer(spec)
    if kind == "Replace":
        return sp.replace_normalizer(spec)
    raise NotImplementedError(f"tokenizer: normalizer {kind!r} is not supported (NFC, NFD, NFKC, NFKD, "
                              "Lowercase, Prepend, Replace, Sequence are)")


class Tokenizer:
    """Byte-level BPE: encode(text) -> ids, decode(ids) -> text, as `tokenizers.Tokenizer`."""

    def __init__(self, vocab, merges, pre_tokenizer=None, added_tokens=(), post_processor=None,
                 ignore_merges=False, unk_token=None, byte_fallback=False, fuse_unk=False, decoder=None):
        self.vocab = dict(vocab)
        self.ranks = {}
        for i, m in enumerate(merges):
            a, b = m.split(" ", 1) if isinstance(m, str) else m
            self.ranks.setdefault((a, b), i)
        self.pre_tokenizer = _PreTokenizer(pre_tokenizer)
        self.added = {t["content"]: t for t in added_tokens}
        for t in added_tokens:
            self.vocab.setdefault(t["content"], t["id"])
        self.id_to_token_map = {i: t for t, i in self.vocab.items()}
        self.special_ids = {t["id"] for t in added_tokens if t.get("special")}
        contents = sorted(self.added, key=len, reverse=True)
        self._added_re = re.compile("|".join(map(re.escape, contents))) if contents else None
        self.post = self._post_processor(post_processor)
        self.ignore_merges = ignore_merges
        self.unk_id = self.vocab.get(unk_token) if unk_token else None
        self.unk = unk_token if self.unk_id is not None else None
        self.byte_fallback, self.fuse_unk = byte_fallback, fuse_unk
        self.byte_level = self.pre_tokenizer.byte_level
        self.decode_tokens = None if self.byte_level else sp.decoder_chain(decoder, _byte_level_text)
        self.strip_first_space = not self.byte_level and sp.strips_first_space(decoder)
        self.normalize = None
        self._cache = {}
        # transformers' tokenizer settings (tokenizer_config.json, read by from_pretrained)
        self.bos_token = self.eos_token = self.unk_token = self.pad_token = None
        self.padding_side, self.truncation_side, self.model_max_length = "right", "right", None

    # -- construction ----------------------------------------------------------------------------
    @classmethod
    def from_str(cls, text):
        """From the text of a tokenizer.json."""
        spec = json.loads(text)
        model = spec["model"]
        if model.get("type") != "BPE":
            raise NotImplementedError(f"tokenizer: model type {model.get('type')!r} is not supported (BPE is)")
        if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix") or model.get("dropout"):
            raise NotImplementedError("tokenizer: BPE with subword prefixes, suffixes or dropout is not supported")
        tok = cls(model["vocab"], model["merges"], spec.get("pre_tokenizer"), spec.get("added_tokens", ()),
                  spec.get("post_processor"), model.get("ignore_merges", False), model.get("unk_token"),
                  model.get("byte_fallback", False), model.get("fuse_unk", False), spec.get("decoder"))
        tok.normalize = _normalizer(spec.get("normalizer"))
        return tok

    @classmethod
    def from_file(cls, path):
        with open(path, encoding="utf-8") as f:
            return cls.from_str(f.read())

    @classmethod
    def from_vocab_merges(cls, vocab_json, merges_txt, special_tokens=("<|endoftext|>",)):
        """From GPT-2's original files (the texts of vocab.json and merges.txt)."""
        vocab = json.loads(vocab_json)
        merges = [line for line in merges_txt.splitlines() if line and not line.startswith("#version")]
        added = [{"content": t, "id": vocab[t], "special": True} for t in special_tokens if t in vocab]
        return cls(vocab, merges, {"type": "ByteLevel"}, added, decoder={"type": "ByteLevel"})

    @classmethod
    def from_pretrained(cls, source, progress=False, config=None):
        """tokenizer.json from a directory or a base URL (as models.from_pretrained), with
        tokenizer_config.json (special tokens, padding side) where a directory has one, or from
        a URL with config=True (a page asking for a missing file logs a 404)."""
        source = os.fspath(source)
        if not in_browser() and not source.startswith(("http://", "https://")):
            path = os.path.join(source, "tokenizer_config.json")
            tok = cls.from_file(os.path.join(source, "tokenizer.json"))
            if config is not False and os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    tok.apply_config(json.load(f))
            return tok
        base = source.rstrip("/") + "/"
        tok = cls.from_str(fetch_bytes(base + "tokenizer.json", progress).decode("utf-8"))
        return tok.apply_config(json.loads(fetch_bytes(base + "tokenizer_config.json", False))) if config else tok

    @classmethod
    async def from_pretrained_async(cls, source, progress=False, config=False):
        base = os.fspath(source).rstrip("/") + "/"
        tok = cls.from_str((await fetch_bytes_async(base + "tokenizer.json", progress)).decode("utf-8"))
        if config:
            tok.apply_config(json.loads(await fetch_bytes_async(base + "tokenizer_config.json", False)))
        return tok

    def _post_processor(self, spec):
        """The ids added around a single sequence by a TemplateProcessing post-processor."""
        if spec is None or spec["type"] in ("ByteLevel",):
            return ([], [])
        if spec["type"] == "Sequence":
            found = [self._post_processor(s) for s in spec["processors"]]
            return next((f for f in found if f != ([], [])), ([], []))
        if spec["type"] != "TemplateProcessing":
            raise NotImplementedError(f"tokenizer: post_processor {spec['type']!r} is not supported")
        before, after, seen = [], [], False
        for item in spec["single"]:
            if "Sequence" in item:
                seen = True
            else:
                ids = spec["special_tokens"][item["SpecialToken"]["id"]]["ids"]
                (after if seen else before).extend(ids)
        return (before, after)

    # -- encoding ----------------------------------------------------------------------------
    def _bpe(self, word):
        if word in self._cache:
            return self._cache[word]
        if self.ignore_merges and word in self.vocab:
            ids = [self.vocab[word]]
        else:
            parts = list(word) if self.byte_level else sp.with_byte_fallback(
                word, self.vocab, self.byte_fallback, self.unk, self.fuse_unk)
            ranks = self.ranks
            while len(parts) > 1:
                best, at = None, -1
                for i in range(len(parts) - 1):
                    r = ranks.get((parts[i], parts[i + 1]))
                    if r is not None and (best is None or r < best):
                        best, at = r, i
                if best is None:
                    break
                pair = (parts[at], parts[at + 1])
                merged, i = [], 0
                while i < len(parts):
                    if i < len(parts) - 1 and (parts[i], parts[i + 1]) == pair:
                        merged.append(parts[i] + parts[i + 1])
                        i += 2
                    else:
                        merged.append(parts[i])
                        i += 1
                parts = merged
            ids = [self.vocab[p] if p in self.vocab else self.unk_id for p in parts]
            ids = [i for i in ids if i is not None]
        if len(self._cache) < 100_000:
            self._cache[word] = ids
        return ids

    def encode(self, text, add_special_tokens=True):
        """The token ids of text (a list of ints), as tokenizers' `encode(text).ids`."""
        if not isinstance(text, str):
            raise TypeError(f"Tokenizer.encode: expected a str, got {type(text).__name__}")
        ids, pos = [], 0
        segments = []
        if self._added_re is not None:
            for m in self._added_re.finditer(text):
                segments.append((text[pos:m.start()], None, pos == 0))
                segments.append((None, self.vocab[m.group(0)], False))
                pos = m.end()
        segments.append((text[pos:], None, pos == 0))
        for segment, special, first in segments:
            if special is not None:
                ids.append(special)
            elif segment:
                if self.normalize is not None:
                    segment = self.normalize(segment)
                for word in self.pre_tokenizer(segment, first):
                    ids.extend(self._bpe(word))
        if add_special_tokens:
            before, after = self.post
            ids = before + ids + after
        return ids

    def __call__(self, text, padding=False, truncation=False, max_length=None, return_tensors=None,
                 add_special_tokens=True, return_attention_mask=True, padding_side=None):
        """transformers' call: a BatchEncoding of input_ids and attention_mask for a text or a
        list of texts; padding=True pads to the longest with pad_token on padding_side (set
        padding_side="left" for generate), return_tensors="pt" gives (B, T) long tensors."""
        return encode_batch(self, text, padding, truncation, max_length, return_tensors, add_special_tokens,
                            return_attention_mask, padding_side)

    @property
    def pad_token_id(self):
        return None if self.pad_token is None else self.vocab.get(self.pad_token)

    @property
    def eos_token_id(self):
        return None if self.eos_token is None else self.vocab.get(self.eos_token)

    @property
    def bos_token_id(self):
        return None if self.bos_token is None else self.vocab.get(self.bos_token)

    def apply_config(self, config):
        """transformers' tokenizer_config.json (a dict): the special tokens' names, padding and
        truncation sides, model_max_length."""
        for name in ("bos_token", "eos_token", "unk_token", "pad_token"):
            value = config.get(name)
            setattr(self, name, value.get("content") if isinstance(value, dict) else value)
        self.padding_side = config.get("padding_side", self.padding_side)
        self.truncation_side = config.get("truncation_side", self.truncation_side)
        limit = config.get("model_max_length")
        self.model_max_length = int(limit) if isinstance(limit, (int, float)) and limit < 1e29 else None
        if "add_bos_token" in config or "add_eos_token" in config:
            # Llama's tokenizers rebuild the template from these (transformers 4's LlamaTokenizerFast)
            bos = [self.bos_token_id] if config.get("add_bos_token", True) and self.bos_token_id is not None else []
            eos = [self.eos_token_id] if config.get("add_eos_token", False) and self.eos_token_id is not None else []
            self.post = (bos, eos)
        return self

    # -- decoding ----------------------------------------------------------------------------
    def token_to_id(self, token):
        return self.vocab.get(token)

    def id_to_token(self, i):
        return self.id_to_token_map.get(i)

    def token_bytes(self, i, skip_special_tokens=True):
        """The bytes one id stands for (b"" for a skipped special token)."""
        tok = self.id_to_token_map.get(int(i))
        if tok is None:
            raise IndexError(f"Tokenizer: id {i} is not in the vocabulary ({len(self.vocab)} tokens)")
        if int(i) in self.special_ids:
            return b"" if skip_special_tokens else tok.encode("utf-8")
        if not self.byte_level:       # SentencePiece-style: <0xNN> is a byte, "▁" a space
            b = sp.token_byte(tok)
            return tok.replace(sp.SPACE, " ").encode("utf-8") if b is None else bytes([b])
        return bytes(_CHAR_BYTE[c] for c in tok) if all(c in _CHAR_BYTE for c in tok) else tok.encode("utf-8")

    def decode(self, ids, skip_special_tokens=True):
        """The text of ids, as tokenizers' `decode` (invalid UTF-8 becomes U+FFFD)."""
        if self.byte_level:
            return b"".join(self.token_bytes(i, skip_special_tokens) for i in ids).decode("utf-8", errors="replace")
        tokens = []
        for i in ids:
            tok = self.id_to_token_map.get(int(i))
            if tok is None:
                raise IndexError(f"Tokenizer: id {i} is not in the vocabulary ({len(self.vocab)} tokens)")
            if not (skip_special_tokens and int(i) in self.special_ids):
                tokens.append(tok)
        return self.decode_tokens(tokens)

    def stream(self, skip_special_tokens=True):
        """A decoder for tokens as they come: feed(id) returns the text now complete (a token
        can end inside a UTF-8 character; its bytes wait for the next)."""
        return _StreamDecoder(self, skip_special_tokens)

    def get_vocab_size(self):
        return len(self.vocab)


class _StreamDecoder:
    def __init__(self, tokenizer, skip_special_tokens):
        self.tokenizer, self.skip = tokenizer, skip_special_tokens
        self.utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.started = False

    def feed(self, token_id):
        text = self.utf8.decode(self.tokenizer.token_bytes(token_id, self.skip))
        if text and not self.started:       # SentencePiece's first "▁" is no space in the text
            self.started = True
            if self.tokenizer.strip_first_space and text.startswith(" "):
                text = text[1:]
        return text

    def flush(self):
        return self.utf8.decode(b"", final=True)
