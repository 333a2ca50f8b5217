"""Ready the MiniLM page's weights: fetch all-MiniLM-L6-v2 into .cache/minilm/ (scripts/fetch_minilm.py)
and copy the four files the page loads into the gitignored site/data/minilm/:

    model.safetensors, config.json, vocab.txt, tokenizer_config.json

Idempotent (a file already there with the same size is not copied again). Usage:
    .venv/bin/python scripts/site_minilm.py [--site DIR]
Exit status 0 and the folder printed on success; 1 with the reason on stderr otherwise.
"""

import argparse
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fetch_minilm  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SITE = os.path.join(REPO, "site")
FILES = ("model.safetensors", "config.json", "vocab.txt", "tokenizer_config.json")


def publish(site_dir=SITE):
    """Path of site/data/minilm/, fetched and copied if needed; raises FetchError/OSError."""
    src = fetch_minilm.fetch()
    dest = os.path.join(site_dir, "data", "minilm")
    os.makedirs(dest, exist_ok=True)
    for name in FILES:
        s, d = os.path.join(src, name), os.path.join(dest, name)
        if not os.path.isfile(s):
            raise fetch_minilm.FetchError(f"{s} is missing after the fetch")
        if not (os.path.isfile(d) and os.path.getsize(d) == os.path.getsize(s)):
            shutil.copyfile(s, d + ".part")
            os.replace(d + ".part", d)
    return dest


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", default=SITE, help="the site folder (default site/)")
    args = ap.parse_args(argv)
    try:
        print(publish(args.site))
    except (fetch_minilm.FetchError, OSError) as e:
        print(f"site_minilm: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
