"""Tokenizer split patterns (written for Oniguruma / the Rust regex crate) as Python `re`
patterns: `\\p{L}`, `\\p{N}`, `\\p{Lu}`, ... become explicit character classes built from
unicodedata, and `\\s` / `\\S` become Unicode's White_Space property (Python's own `\\s` also
takes U+001C..U+001F, which the Rust side does not). Plain Python, standard library only."""

import re
import unicodedata

# Unicode's White_Space property
_WHITE_SPACE = ((0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680),
                (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000))
_by_category = {}


def _categories():
    """Code point ranges per general category (two letters), computed once (~0.3 s)."""
    if not _by_category:
        category = unicodedata.category
        prev, start = None, 0
        for cp in range(0x110000):
            c = category(chr(cp))
            if c != prev:
                if prev is not None:
                    _by_category.setdefault(prev, []).append((start, cp - 1))
                prev, start = c, cp
        _by_category.setdefault(prev, []).append((start, 0x10FFFF))
    return _by_category


def _ranges(prop):
    """Sorted, merged ranges of a property name: a category (Lu) or a major class (L)."""
    if prop in ("s", "S"):
        return list(_WHITE_SPACE)
    cats = _categories()
    names = [c for c in cats if c == prop or (len(prop) == 1 and c[0] == prop)]
    if not names:
        raise ValueError(f"tokenizer pattern: unsupported Unicode property \\p{{{prop}}}")
    spans = sorted(r for c in names for r in cats[c])
    merged = [list(spans[0])]
    for lo, hi in spans[1:]:
        if lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return merged


def _class_body(prop):
    return "".join(f"\\U{lo:08x}" if lo == hi else f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in _ranges(prop))


_TOKEN = re.compile(r"\\[pP]\{(\w+)\}|\\[sS]|\\.|\[|\]")


def translate(pattern):
    """The Python `re` form of an Oniguruma-style split pattern."""
    out, pos, in_class = [], 0, False
    for m in _TOKEN.finditer(pattern):
        out.append(pattern[pos:m.start()])
        pos = m.end()
        tok = m.group(0)
        if tok == "[":
            if in_class:
                raise ValueError("tokenizer pattern: nested character classes are not supported")
            in_class = True
            out.append(tok)
        elif tok == "]":
            in_class = False
            out.append(tok)
        elif tok[1] in "pPsS":
            prop = m.group(1) or tok[1]
            negated = tok[1] in "PS"
            body = _class_body(prop)
            if in_class:
                if negated:
                    raise ValueError(f"tokenizer pattern: {tok} inside a character class is not supported")
                out.append(body)
            else:
                out.append(f"[{'^' if negated else ''}{body}]")
        else:
            out.append(tok)
    out.append(pattern[pos:])
    return re.compile("".join(out))
