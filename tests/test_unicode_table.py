"""The Unicode category tables shipped in the wheel (src/torchweb/models/unicode_categories_*.json,
written by scripts/gen_unicode_table.py) against a full scan of this Python's unicodedata: the
ranges of every general category and major class a tokenizer pattern can name must be the scan's,
translated patterns must match the same text with the table and with the scan (and as tokenizers'
Split), a table of another Unicode version must not be used, and the pages' Pyodide must have one."""

import glob
import json
import os
import unicodedata

import pytest

from torchweb.models import unicode_regex

TABLES = glob.glob(os.path.join(os.path.dirname(unicode_regex.__file__), "unicode_categories_*.json"))
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")
GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


def _scan_by_category():
    """{category: ranges} from a scan of every code point of this Python's unicodedata (the
    module's fallback, run here in a fresh state with the table turned off)."""
    saved = unicode_regex._by_category, unicode_regex._table
    unicode_regex._by_category, unicode_regex._table = {}, [None]
    try:
        return {c: [list(r) for r in spans] for c, spans in unicode_regex._categories().items()}
    finally:
        unicode_regex._by_category, unicode_regex._table = saved


@pytest.fixture
def fresh(monkeypatch):
    """unicode_regex with its per-process caches emptied (restored afterwards)."""
    monkeypatch.setattr(unicode_regex, "_by_category", {})
    monkeypatch.setattr(unicode_regex, "_table", [])
    unicode_regex._class_body.cache_clear()
    yield unicode_regex
    unicode_regex._class_body.cache_clear()


def test_tables_cover_cpython_and_pyodide():
    versions = sorted(json.load(open(p))["unicode"] for p in TABLES)
    assert "14.0.0" in versions and "16.0.0" in versions, versions     # CPython 3.11; Pyodide's 3.14
    for p in TABLES:
        assert p.endswith(f"unicode_categories_{json.load(open(p))['unicode']}.json"), p


# unicodedata.unidata_version of each CPython minor version (Pyodide runs one of them)
UNICODE_OF_PYTHON = {"3.11": "14.0.0", "3.12": "15.0.0", "3.13": "15.1.0", "3.14": "16.0.0"}


def test_the_pages_pyodide_has_a_table():
    """The pages' Pyodide finds a table for its Python (else every visit scans: 1-3 s)."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    lock = os.path.join(os.environ.get("TORCHWEB_PYODIDE_DIR") or os.path.join(repo, "node_modules", "pyodide"),
                        "pyodide-lock.json")
    if not os.path.exists(lock):
        pytest.skip("no Pyodide here (TORCHWEB_PYODIDE_DIR)")
    python = ".".join(json.load(open(lock))["info"]["python"].split(".")[:2])
    assert python in UNICODE_OF_PYTHON, f"Pyodide's Python {python}: add its Unicode version here"
    assert os.path.exists(unicode_regex._TABLE.format(UNICODE_OF_PYTHON[python])), \
        f"no table for Pyodide's Python {python}: run scripts/gen_unicode_table.py --pyodide DIR"


def test_table_equals_full_scan(fresh):
    if not os.path.exists(fresh._TABLE.format(unicodedata.unidata_version)):
        pytest.skip(f"no table shipped for Unicode {unicodedata.unidata_version}: the scan is used")
    assert fresh._shipped() is not None
    scan = _scan_by_category()
    classes = sorted(scan) + sorted({c[0] for c in scan})      # every category and major class
    for prop in classes:
        want = unicode_regex._merged(r for c, spans in scan.items() if c == prop or (len(prop) == 1 and c[0] == prop)
                       for r in spans)
        assert fresh._ranges(prop) == want, prop
    assert {c: [list(r) for r in spans] for c, spans in fresh._by_category.items()} == scan


def test_only_the_classes_used_are_decoded(fresh):
    if fresh._shipped() is None:
        pytest.skip(f"no table shipped for Unicode {unicodedata.unidata_version}")
    fresh.translate(GPT2_PATTERN)
    assert set(fresh._by_category) == {"Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Nl", "No"}


def test_another_unicode_version_scans(fresh, monkeypatch, tmp_path):
    """A table whose version is not this Python's is left unused: the scan gives the classes."""
    (tmp_path / f"unicode_categories_{unicodedata.unidata_version}.json").write_text(
        json.dumps({"unicode": "0.0.0", "categories": {"Lu": [0, 0x10FFFF]}}))
    monkeypatch.setattr(fresh, "_TABLE", str(tmp_path / "unicode_categories_{}.json"))
    assert fresh._shipped() is None
    scan = _scan_by_category()
    assert fresh._ranges("Lu") == scan["Lu"]


@pytest.mark.parametrize("pattern", [GPT2_PATTERN, LLAMA3_PATTERN])
def test_translated_patterns_match_with_table_and_scan(fresh, monkeypatch, pattern):
    text = "".join(chr(cp) for cp in range(0, 0x30000, 7) if not 0xD800 <= cp < 0xE000) + " x 12 \n\t ²³ Ⅻ"
    with_table = fresh.translate(pattern).findall(text)
    fresh._class_body.cache_clear()
    monkeypatch.setattr(fresh, "_by_category", {})
    monkeypatch.setattr(fresh, "_table", [None])          # as where no table fits: scanned
    assert fresh.translate(pattern).findall(text) == with_table


@pytest.mark.parametrize("pattern", [r"\p{S}+", r"\S+", r"\p{Sm}|\p{Lu}\p{Ll}*|\p{Nd}+"])
def test_classes_split_as_tokenizers_does(fresh, pattern):
    """\\p{S} (symbols) and \\S (not White_Space) are different classes; splits as tokenizers' Split."""
    tokenizers = pytest.importorskip("tokenizers")
    text = "a+b $5 \u00a0©x Été ≤ 12³ \x1c end"
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), "removed", invert=True)
    assert fresh.translate(pattern).findall(text) == [piece for piece, _ in split.pre_tokenize_str(text)]
