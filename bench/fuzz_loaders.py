"""The loader fuzz's long mode: tests/test_loader_fuzz.py with many examples per test and a
random seed, then the count of each outcome (loaded, or which documented exception).

    python bench/fuzz_loaders.py                 5000 examples per fuzz test
    python bench/fuzz_loaders.py -n 20000 -k safetensors
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(os.path.dirname(HERE), "tests")


class _Outcomes:
    """A pytest plugin: prints test_loader_fuzz.OUTCOMES when the run ends."""

    def pytest_sessionfinish(self, session):
        mod = sys.modules.get("test_loader_fuzz")
        outcomes = getattr(mod, "OUTCOMES", {})
        print(f"\nloader fuzz: {sum(outcomes.values())} inputs in {time.time() - START:.0f} s")
        for (test, outcome), n in sorted(outcomes.items()):
            print(f"  {test:28s} {outcome:20s} {n}")


START = time.time()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=5000, help="examples per fuzz test")
    ap.add_argument("-k", default=None, help="pytest -k expression (a subset of the tests)")
    args = ap.parse_args()
    os.environ["TORCHWEB_FUZZ"] = "long"
    os.environ["TORCHWEB_FUZZ_LOADERS"] = str(args.n)
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
    import pytest
    argv = ["-q", "-p", "no:cacheprovider", os.path.join(TESTS, "test_loader_fuzz.py")]
    if args.k:
        argv += ["-k", args.k]
    sys.exit(pytest.main(argv, plugins=[_Outcomes()]))


if __name__ == "__main__":
    main()
