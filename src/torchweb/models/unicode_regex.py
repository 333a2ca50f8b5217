"""Tokenizer split patterns (written for Oniguruma / the Rust regex crate) as Python `re`
patterns: `\\p{L}`, `\\p{N}`, `\\p{Lu}`, ... become explicit character classes built from
unicodedata's categories (read from a range table shipped per Unicode version, made by
scripts/gen_unicode_table.py, else scanned once per process), and `\\s` / `\\S` become Unicode's
White_Space property (Python's own `\\s` also takes U+001C..U+001F, which the Rust side does
not). Plain Python, standard library only."""

import functools
import json
import os
import re
import unicodedata

# Unicode's White_Space property
_WHITE_SPACE = ((0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680),
                (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000))
_by_category = {}     # category -> ranges, filled lazily per category
_table = []           # [categories of the shipped table] once read; [None] where there is none
_TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "unicode_categories_{}.json")


def _shipped():
    """The shipped table's {category: encoded ranges} for this Python's Unicode version, or None
    (written by scripts/gen_unicode_table.py; another version scans, so results stay exact)."""
    if not _table:
        try:
            with open(_TABLE.format(unicodedata.unidata_version)) as f:
                t = json.load(f)
            _table.append(t["categories"] if t["unicode"] == unicodedata.unidata_version else None)
        except (OSError, ValueError, KeyError):
            _table.append(None)
    return _table[0]


def _scan():
    """Every category's ranges from a scan of all code points (~0.3 s; 2-3 s in Pyodide)."""
    category = unicodedata.category
    prev, start = None, 0
    for cp in range(0x110000):
        c = category(chr(cp))
        if c != prev:
            if prev is not None:
                _by_category.setdefault(prev, []).append((start, cp - 1))
            prev, start = c, cp
    _by_category.setdefault(prev, []).append((start, 0x10FFFF))


def _category_ranges(names):
    """{category: ranges} for the two-letter categories in names (all that exist where names is
    None), decoded from the shipped table or scanned once per process."""
    table = _shipped()
    if table is None:
        if not _by_category:
            _scan()
    else:
        for cat in (table if names is None else names):
            if cat in table and cat not in _by_category:
                flat, pos, spans = table[cat], 0, []
                for i in range(0, len(flat), 2):     # (gap, length - 1) pairs: see the generator
                    lo = pos + flat[i]
                    pos = lo + flat[i + 1] + 1
                    spans.append((lo, pos - 1))
                _by_category[cat] = spans
    return _by_category


def _categories():
    """Code point ranges per general category (two letters), all of them."""
    return _category_ranges(None)


_CATEGORIES = ("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi",
               "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn")


def _ranges(prop):
    """Sorted, merged ranges of a property name: a category (Lu) or a major class (L)."""
    if prop == "White_Space":         # \\s, \\S (a name of its own: \\p{S} is the symbols)
        return list(_WHITE_SPACE)
    names = [c for c in _CATEGORIES if c == prop or (len(prop) == 1 and c[0] == prop)]
    if not names:
        raise ValueError(f"tokenizer pattern: unsupported Unicode property \\p{{{prop}}}")
    cats = _category_ranges(names)
    return _merged(r for c in names for r in cats.get(c, ()))


def _merged(spans):
    """Sorted ranges with the overlapping and adjacent ones joined."""
    out = []
    for lo, hi in sorted(map(tuple, spans)):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return out


@functools.cache
def _class_body(props):
    """The ranges of the properties named in props (a tuple), joined, as a class's contents.
    Literal characters: re's parser reads them several times faster than \\U escapes, and a big
    class's parse is most of a pattern's compile (so is its length: [^\\s\\p{L}\\p{N}] is one
    union, not three lists)."""
    spans = _merged(r for prop in props for r in _ranges(prop))
    return "".join(_char(lo) if lo == hi else f"{_char(lo)}-{_char(hi)}" for lo, hi in spans)


def _char(cp):
    c = chr(cp)
    return f"\\U{cp:08x}" if c in "\\]^-[&~|" or c.isspace() or cp < 0x20 else c


_TOKEN = re.compile(r"\\[pP]\{(\w+)\}|\\[sS]|\\.|\[|\]")


def translate(pattern):
    """The Python `re` form of an Oniguruma-style split pattern."""
    out, pos, in_class = [], 0, None     # in_class: the properties named in the open [...]
    for m in _TOKEN.finditer(pattern):
        out.append(pattern[pos:m.start()])
        pos = m.end()
        tok = m.group(0)
        if tok == "[":
            if in_class is not None:
                raise ValueError("tokenizer pattern: nested character classes are not supported")
            in_class = []
            out.append(tok)
        elif tok == "]":
            if in_class:
                out.append(_class_body(tuple(in_class)))
            in_class = None
            out.append(tok)
        elif tok[1] in "pPsS":
            prop = m.group(1) or "White_Space"
            negated = tok[1] in "PS"
            if in_class is not None:
                if negated:
                    raise ValueError(f"tokenizer pattern: {tok} inside a character class is not supported")
                in_class.append(prop)
            else:
                out.append(f"[{'^' if negated else ''}{_class_body((prop,))}]")
        else:
            out.append(tok)
    out.append(pattern[pos:])
    return re.compile("".join(out))
