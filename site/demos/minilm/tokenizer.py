"""A BERT WordPiece tokenizer in pure Python (standard library only: runs in Pyodide as it is).

It gives the same ids as Hugging Face's tokenizers (BertNormalizer + BertPreTokenizer + WordPiece +
the [CLS] ... [SEP] template) and transformers' BertTokenizer for a BERT vocab.txt, as used by
sentence-transformers' all-MiniLM-L6-v2:

    tok = BertTokenizer.from_files("vocab.txt", "tokenizer_config.json")
    batch = tok(["A sentence.", "Another one"], max_length=256)
    batch["input_ids"], batch["attention_mask"], batch["token_type_ids"]   # lists of lists

The steps, as Hugging Face does them:
  1. special tokens written in the text ("[SEP]", "[MASK]", ...) are split off first and kept;
  2. normalize: drop NUL, U+FFFD and control/format characters, map whitespace to " ", put spaces
     around CJK ideographs, strip accents (NFD, drop non-spacing marks) when lower-casing (or as
     strip_accents says), lower-case;
  3. pre-tokenize: split on whitespace, split off each punctuation character;
  4. WordPiece: greedy longest match from the left, continuations prefixed "##"; a word with no
     full match, or longer than 100 characters, is one [UNK];
  5. [CLS] + tokens + [SEP], truncated to max_length (the tokens, not the specials, are cut),
     padded with [PAD] (id 0) to the longest in the batch with attention_mask 0 there.
"""

import json
import unicodedata

__all__ = ["BertTokenizer", "load_vocab"]

# Unicode's White_Space property (what Rust's char::is_whitespace tests); tab, newline and
# carriage return count as whitespace, not as control characters.
_WHITESPACE = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                        "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
# the CJK Unified Ideographs blocks BERT isolates, as Hugging Face's tokenizers lists them (its
# fifth range starts at U+2B920 where BERT's Python code says U+2B820; the fast tokenizer, which
# sentence-transformers uses, is the one followed here)
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def _is_whitespace(ch):
    return ch in _WHITESPACE


def _is_control(ch):
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs")


def _is_punctuation(ch):
    return ch in _ASCII_PUNCT or unicodedata.category(ch).startswith("P")


def _is_cjk(cp):
    for lo, hi in _CJK:
        if lo <= cp <= hi:
            return True
    return False


def load_vocab(text):
    """{token: id} from the text of a vocab.txt (one token a line, the id is the line number; a
    token listed twice keeps its last line, as Hugging Face reads it)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return {line.rstrip("\r"): i for i, line in enumerate(lines)}


class BertTokenizer:
    """BERT's uncased/cased WordPiece tokenizer. `vocab` maps token -> id."""

    def __init__(self, vocab, do_lower_case=True, strip_accents=None, tokenize_chinese_chars=True,
                 clean_text=True, unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]",
                 cls_token="[CLS]", mask_token="[MASK]", model_max_length=512,
                 max_input_chars_per_word=100, continuing_subword_prefix="##"):
        self.vocab = dict(vocab)
        self.ids_to_tokens = {i: t for t, i in self.vocab.items()}
        self.do_lower_case = do_lower_case
        # Hugging Face: strip_accents=None means "strip when lower-casing"
        self.strip_accents = do_lower_case if strip_accents is None else strip_accents
        self.tokenize_chinese_chars = tokenize_chinese_chars
        self.clean_text = clean_text
        self.unk_token, self.sep_token, self.pad_token = unk_token, sep_token, pad_token
        self.cls_token, self.mask_token = cls_token, mask_token
        self.model_max_length = model_max_length
        self.max_input_chars_per_word = max_input_chars_per_word
        self.prefix = continuing_subword_prefix
        for t in (unk_token, sep_token, pad_token, cls_token):
            if t not in self.vocab:
                raise ValueError(f"special token {t!r} is not in the vocabulary")
        # special tokens found in the raw text, longest first (Hugging Face's leftmost-longest match)
        self.special_tokens = sorted({t for t in (unk_token, sep_token, pad_token, cls_token, mask_token)
                                      if t and t in self.vocab}, key=lambda t: (-len(t), t))
        self.unk_token_id = self.vocab[unk_token]
        self.sep_token_id = self.vocab[sep_token]
        self.pad_token_id = self.vocab[pad_token]
        self.cls_token_id = self.vocab[cls_token]

    @classmethod
    def from_files(cls, vocab_path, config_path=None, **kwargs):
        """From a vocab.txt and (optionally) a tokenizer_config.json."""
        with open(vocab_path, encoding="utf-8") as f:
            vocab_text = f.read()
        config = {}
        if config_path is not None:
            with open(config_path, encoding="utf-8") as f:
                config = json.load(f)
        return cls.from_text(vocab_text, config, **kwargs)

    @classmethod
    def from_text(cls, vocab_text, config=None, **kwargs):
        """From the text of a vocab.txt and a tokenizer_config dict (what a page fetched)."""
        config = dict(config or {})
        args = {}
        for key in ("do_lower_case", "strip_accents", "tokenize_chinese_chars", "unk_token", "sep_token",
                    "pad_token", "cls_token", "mask_token", "model_max_length"):
            if config.get(key) is not None:
                args[key] = config[key]
        args.update(kwargs)
        return cls(load_vocab(vocab_text), **args)

    # -- the steps -------------------------------------------------------------------------
    def normalize(self, text):
        """BertNormalizer: clean, isolate CJK ideographs, strip accents, lower-case."""
        if self.clean_text:
            text = "".join(" " if _is_whitespace(c) else c for c in text
                           if not (c == "\0" or c == "\ufffd" or _is_control(c)))
        if self.tokenize_chinese_chars:
            text = "".join(f" {c} " if _is_cjk(ord(c)) else c for c in text)
        if self.strip_accents:
            text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
        if self.do_lower_case:
            text = "".join(c.lower() for c in text)   # per character: no final-sigma rule
        return text

    def pre_tokenize(self, text):
        """BertPreTokenizer: split on whitespace, each punctuation character its own word."""
        words, cur = [], []
        for c in text:
            if _is_whitespace(c):
                if cur:
                    words.append("".join(cur))
                    cur = []
            elif _is_punctuation(c):
                if cur:
                    words.append("".join(cur))
                    cur = []
                words.append(c)
            else:
                cur.append(c)
        if cur:
            words.append("".join(cur))
        return words

    def wordpiece(self, word):
        """Greedy longest-match-first WordPiece of one word: a list of tokens."""
        if len(word) > self.max_input_chars_per_word:
            return [self.unk_token]
        tokens, start, n = [], 0, len(word)
        while start < n:
            end = n
            piece = None
            while start < end:
                sub = word[start:end]
                if start > 0:
                    sub = self.prefix + sub
                if sub in self.vocab:
                    piece = sub
                    break
                end -= 1
            if piece is None:
                return [self.unk_token]
            tokens.append(piece)
            start = end
        return tokens

    def _split_special(self, text):
        """[(segment, is_special)]: special tokens written in the text are matched first."""
        out, i, n, last = [], 0, len(text), 0
        while i < n:
            if text[i] == "[":       # every BERT special token starts with "["
                for t in self.special_tokens:
                    if text.startswith(t, i):
                        if last < i:
                            out.append((text[last:i], False))
                        out.append((t, True))
                        i += len(t)
                        last = i
                        break
                else:
                    i += 1
            else:
                i += 1
        if last < n:
            out.append((text[last:], False))
        return out

    def tokenize(self, text):
        """The WordPiece tokens of a text, without [CLS]/[SEP]."""
        tokens = []
        for segment, special in self._split_special(text):
            if special:
                tokens.append(segment)
                continue
            for word in self.pre_tokenize(self.normalize(segment)):
                tokens.extend(self.wordpiece(word))
        return tokens

    def convert_tokens_to_ids(self, tokens):
        return [self.vocab.get(t, self.unk_token_id) for t in tokens]

    def convert_ids_to_tokens(self, ids):
        return [self.ids_to_tokens.get(i, self.unk_token) for i in ids]

    def encode(self, text, max_length=None, truncation=True, add_special_tokens=True):
        """The ids of one text: [CLS] tokens [SEP], at most max_length in all when truncating."""
        ids = self.convert_tokens_to_ids(self.tokenize(text))
        if truncation:
            limit = self.model_max_length if max_length is None else max_length
            keep = limit - (2 if add_special_tokens else 0)
            if keep < 0:
                raise ValueError(f"max_length={limit} leaves no room for the special tokens")
            ids = ids[:keep]
        if add_special_tokens:
            ids = [self.cls_token_id] + ids + [self.sep_token_id]
        return ids

    def __call__(self, texts, max_length=None, truncation=True, padding=True, add_special_tokens=True):
        """A batch: {"input_ids", "token_type_ids", "attention_mask"}, lists of lists of ints, padded
        with [PAD] to the longest text (padding=True) or to max_length (padding="max_length")."""
        single = isinstance(texts, str)
        if single:
            texts = [texts]
        seqs = [self.encode(t, max_length, truncation, add_special_tokens) for t in texts]
        if padding == "max_length":
            width = self.model_max_length if max_length is None else max_length
        elif padding:
            width = max((len(s) for s in seqs), default=0)
        else:
            width = None
        ids, masks = [], []
        for s in seqs:
            pad = 0 if width is None else max(0, width - len(s))
            ids.append(s + [self.pad_token_id] * pad)
            masks.append([1] * len(s) + [0] * pad)
        out = {"input_ids": ids, "token_type_ids": [[0] * len(s) for s in ids], "attention_mask": masks}
        if single:
            out = {k: v[0] for k, v in out.items()}
        return out
