"""Copy the demos' data from the gitignored .cache/ into the gitignored site/data/ (build step).

    site/data/digits.json   the "Train" page's digits (scripts/fetch_digits.py fetches them
                            into .cache/digits/ first when they are not there)
    site/data/mnist/        the same digits as MNIST's gzipped IDX files, 28x28 (scripts/digits_mnist.py),
                            for MNIST(download=True) and pytorch/examples' mnist main.py
    site/data/minilm/       the "Search" page's all-MiniLM-L6-v2 weights, config and vocab
                            (scripts/site_minilm.py, from scripts/fetch_minilm.py's cache)
    site/data/lm_tiny/      the tests' tiny GPT-2 checkpoint and tokenizer for the Complete page
                            (tests/browser/fixtures/lm_tiny: publish_lm_fixture)

Big data never goes in git: scripts/wheel.py and scripts/run_page.py call publish() when they
ready site/. A demo whose data cannot be had is reported here and shows the reason on its page.
"""

import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import digits_mnist  # noqa: E402
import fetch_digits  # noqa: E402
import site_minilm  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def publish_digits(site_dir=os.path.join(REPO, "site")):
    """Path of site/data/digits.json, fetched and copied if needed; raises FetchError/OSError."""
    src = fetch_digits.fetch()
    dest = os.path.join(site_dir, "data", "digits.json")
    if not (os.path.isfile(dest) and os.path.getsize(dest) == os.path.getsize(src)):
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(src, dest)
    return dest


def publish_lm_fixture(site_dir=os.path.join(REPO, "site")):
    """site/data/lm_tiny/, a fresh copy of the tests' tiny sharded GPT-2 and its tokenizer (what
    the Complete page's tests, the gallery and measure_load.py --lm open): its path."""
    dest = os.path.join(site_dir, "data", "lm_tiny")
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(os.path.join(REPO, "tests", "browser", "fixtures", "lm_tiny"), dest)
    return dest


def publish_digits_mnist(site_dir=os.path.join(REPO, "site"), folder="mnist", **sizes):
    """site/data/<folder>/ (the digits as MNIST's files; sizes: digits_mnist.write's n_train,
    n_test): (its path, [(file name, md5)])."""
    dest = os.path.join(site_dir, "data", folder)
    return dest, digits_mnist.write(fetch_digits.fetch(), dest, **sizes)


def publish(site_dir=os.path.join(REPO, "site")):
    """Ready every demo's data in site/data/; a failure is printed, not raised."""
    try:
        site_minilm.publish(site_dir)
    except (site_minilm.fetch_minilm.FetchError, OSError) as e:
        print(f"site_data: the Search page's MiniLM weights are unavailable: {e}", file=sys.stderr)
    try:
        path = publish_digits(site_dir)
        publish_digits_mnist(site_dir)
        return path
    except (fetch_digits.FetchError, OSError) as e:
        print(f"site_data: the Train page's digits are unavailable: {e}", file=sys.stderr)
        return None


if __name__ == "__main__":
    print(publish())
