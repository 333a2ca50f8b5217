"""The parts of tokenizer.json that SentencePiece-style BPE models use (Llama 2, TinyLlama,
Mistral): spaces written as "▁" (a Prepend + Replace normalizer, or a Metaspace pre-tokenizer),
characters outside the vocabulary spelled as <0xNN> byte tokens (byte_fallback), and the
decoders that undo both. Each follows the `tokenizers` package's rules, quirks included
(tests/test_lm_sentencepiece.py checks them against it)."""

import re

from .unicode_regex import translate

SPACE = "\u2581"
_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def byte_token(b):
    return f"<0x{b:02X}>"


def token_byte(token):
    """The byte a <0xNN> token stands for, or None."""
    m = _BYTE_TOKEN.fullmatch(token) if len(token) == 6 else None
    return int(m.group(1), 16) if m else None


def pattern_of(spec):
    """A Replace/Split pattern ({"String": s} or {"Regex": r}) as a compiled Python pattern."""
    return translate(spec["Regex"]) if "Regex" in spec else re.compile(re.escape(spec["String"]))


def prepend_normalizer(spec):
    text = spec["prepend"]
    return lambda s: text + s if s else s


def replace_normalizer(spec):
    pattern, content = pattern_of(spec["pattern"]), spec["content"]
    return lambda s: pattern.sub(lambda m: content, s)


def metaspace(pieces, replacement, prepend_scheme, split, first):
    """tokenizers' Metaspace pre-tokenizer: spaces become the replacement; a piece that does not
    start with it gets it prepended ("always", or "first" for the text's first piece only); with
    split, each piece is cut before every replacement character."""
    out = []
    for i, piece in enumerate(pieces):
        piece = piece.replace(" ", replacement)
        if not piece.startswith(replacement) and (
                prepend_scheme == "always" or (prepend_scheme == "first" and first and i == 0)):
            piece = replacement + piece
        if not split:
            out.append(piece)
            continue
        start = 0
        for j in range(1, len(piece)):
            if piece[j] == replacement:
                out.append(piece[start:j])
                start = j
        if piece:
            out.append(piece[start:])
    return out


def with_byte_fallback(chars, vocab, byte_fallback, unk, fuse_unk):
    """The BPE's first symbols: each character in the vocabulary, else its UTF-8 bytes as
    <0xNN> tokens (byte_fallback, when all are in the vocabulary), else the unknown token
    (consecutive ones fused into one with fuse_unk); None where there is no unknown token."""
    out = []
    for c in chars:
        if c in vocab:
            out.append(c)
            continue
        if byte_fallback:
            pieces = [byte_token(b) for b in c.encode("utf-8")]
            if all(p in vocab for p in pieces):
                out.extend(pieces)
                continue
        if unk is None:
            continue
        if not (fuse_unk and out and out[-1] is unk):
            out.append(unk)
    return out


# -- decoders: each maps the list of token strings to a new list, as tokenizers' decode_chain --
def _replace(spec):
    pattern, content = pattern_of(spec["pattern"]), spec["content"]
    return lambda tokens: [pattern.sub(lambda m: content, t) for t in tokens]


def _byte_fallback(_spec):
    def chain(tokens):
        out, pending = [], []

        def flush():
            if pending:
                try:
                    out.append(bytes(pending).decode("utf-8"))
                except UnicodeDecodeError:
                    out.extend("\ufffd" * len(pending))
                pending.clear()
        for t in tokens:
            b = token_byte(t)
            if b is None:
                flush()
                out.append(t)
            else:
                pending.append(b)
        flush()
        return out
    return chain


def _fuse(_spec):
    return lambda tokens: ["".join(tokens)]


def _strip(spec):
    content, start, stop = spec["content"], spec["start"], spec["stop"]

    def cut(t):
        a = 0
        while a < min(start, len(t)) and t[a] == content:
            a += 1
        b = len(t)
        while len(t) - b < stop and b > a and t[b - 1] == content:
            b -= 1
        return t[a:b]
    return lambda tokens: [cut(t) for t in tokens]


def _metaspace(spec):
    replacement = spec.get("replacement", SPACE)
    scheme = spec.get("prepend_scheme", "always" if spec.get("add_prefix_space", True) else "never")

    def chain(tokens):       # tokenizers drops every replacement of the first token, not just the leading one
        return [t.replace(replacement, "" if i == 0 and scheme != "never" else " ") for i, t in enumerate(tokens)]
    return chain


DECODERS = {"Replace": _replace, "ByteFallback": _byte_fallback, "Fuse": _fuse, "Strip": _strip,
            "Metaspace": _metaspace}


def strips_first_space(spec):
    """Whether the decoder drops the space that "▁" stands for at the text's start (a Strip of
    " " from the start, or Metaspace with a prepend scheme): the stream decoder does it too."""
    steps = [] if spec is None else spec["decoders"] if spec["type"] == "Sequence" else [spec]
    return any((s["type"] == "Strip" and s["content"] == " " and s["start"] > 0) or
               (s["type"] == "Metaspace" and s.get("prepend_scheme", "always") != "never"
                and s.get("add_prefix_space", True)) for s in steps)


def decoder_chain(spec, byte_level):
    """tokenizer.json's "decoder" as a function from token strings to the text. byte_level(tokens)
    decodes GPT-2's byte characters (the ByteLevel decoder)."""
    if spec is None:
        return " ".join
    steps = []
    for s in spec["decoders"] if spec["type"] == "Sequence" else [spec]:
        if s["type"] == "ByteLevel":
            steps.append(lambda tokens: [byte_level(tokens)])
        elif s["type"] in DECODERS:
            steps.append(DECODERS[s["type"]](s))
        else:
            raise NotImplementedError(f"tokenizer: decoder {s['type']!r} is not supported "
                                      f"(ByteLevel, {', '.join(DECODERS)}, Sequence are)")

    def decode(tokens):
        for step in steps:
            tokens = step(tokens)
        return "".join(tokens)
    return decode
