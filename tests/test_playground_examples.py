"""The playground's examples (site/demos/playground/examples/*.py, issue 10) are plain PyTorch
scripts: each runs unchanged under real PyTorch (CPU, the oracle) and under torchweb on its webgpu
device (lavapipe here), `import torch` bound to each library in turn (tests/model_files.py), and
both must print the same lines with the same numbers (within a float32 tolerance) and send the
same plots to the page's `playground.plot` (site/demos/playground/playground.py, which in
CPython only records them). The examples draw their data and starting weights from Python's
seeded `random`, since PyTorch's and torchweb's generators differ."""

import contextlib
import io
import math
import os
import re
import sys

import pytest
import torch

import torchweb
from model_files import load_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLAYGROUND = os.path.join(ROOT, "site", "demos", "playground")
EXAMPLES = sorted(f[:-3] for f in os.listdir(os.path.join(PLAYGROUND, "examples")) if f.endswith(".py"))
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
# Per example: (relative, absolute) tolerance on printed numbers and plotted points. Training
# runs of a few hundred float32 steps drift apart a little; the tour is exact up to rounding.
TOLERANCE = {"tensor_tour": (1e-4, 1e-4), "autograd": (1e-4, 1e-4), "xor_mlp": (2e-2, 2e-4), "regression": (2e-2, 1.5e-2),
             "mnist_cnn": (2e-2, 1e-3), "char_rnn": (5e-2, 2e-3)}
# Lines whose text names the library's device, not a computed value.
SKIP_LINE = re.compile(r"^device:")

sys.path.insert(0, PLAYGROUND)
import playground  # noqa: E402  (the examples' `from playground import plot`)


def run_example(name, lib):
    """(printed lines, plotted figures) of examples/<name>.py with torch bound to lib."""
    playground.figures.clear()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        load_file(os.path.join(PLAYGROUND, "examples", name + ".py"), lib)
    lines = [ln for ln in out.getvalue().splitlines() if not SKIP_LINE.match(ln)]
    return lines, [dict(f) for f in playground.figures]


def close(a, b, rel, abs_):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def test_examples_are_listed():
    assert {"tensor_tour", "xor_mlp", "regression", "mnist_cnn", "char_rnn"} <= set(EXAMPLES)
    assert set(EXAMPLES) == set(TOLERANCE)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_matches_pytorch(name):
    if not torchweb.webgpu.is_available():
        pytest.fail("no WebGPU adapter: install mesa-vulkan-drivers (lavapipe) and wgpu")
    rel, abs_ = TOLERANCE[name]
    want_lines, want_figs = run_example(name, torch)
    got_lines, got_figs = run_example(name, torchweb)
    assert len(got_lines) == len(want_lines), (got_lines, want_lines)
    for got, want in zip(got_lines, want_lines):
        # the same words, and each printed number close to PyTorch's
        assert NUMBER.sub("#", got) == NUMBER.sub("#", want), (got, want)
        g, w = [float(v) for v in NUMBER.findall(got)], [float(v) for v in NUMBER.findall(want)]
        assert all(close(a, b, rel, abs_) for a, b in zip(g, w)), (got, want)
    assert [f["title"] for f in got_figs] == [f["title"] for f in want_figs]
    assert want_figs, f"{name} plots nothing"
    for got, want in zip(got_figs, want_figs):
        assert len(got["ys"]) == len(want["ys"]) and got["xs"] == pytest.approx(want["xs"], rel=rel, abs=abs_)
        bad = [(i, a, b) for i, (a, b) in enumerate(zip(got["ys"], want["ys"])) if not close(a, b, rel, abs_)]
        assert not bad, (want["title"], bad[:5])
