"""The differential fuzz: hypothesis draws cases (tests/fuzz/strategies.py), each runs with
PyTorch and with torchweb on the device, and the results (values, shape, dtype, or the
exception type) must agree. See docs/testing.md, "The fuzz".

    pytest tests/test_fuzz.py                      CI mode: seeded, a fixed budget
    pytest tests/test_fuzz.py --fuzz-long -s       long mode (or TORCHWEB_FUZZ=long)
"""

import json
import os

import pytest
import torch

import torchweb
from fuzz import catalogue as C
from fuzz import session as S
from fuzz.runner import run_case
from torchweb.ops.elementwise.table import OPS

FAMILIES = list(S.CI_EXAMPLES)


@pytest.fixture(scope="module")
def fuzz_mode(request):
    long = S.long_mode(request.config)
    seed = S.long_seed() if long else None
    tr = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")

    def say(lines):
        if capture is not None:
            with capture.global_and_fixture_disabled():
                _write(tr, lines)
        else:
            _write(tr, lines)

    if long:
        say([f"\nfuzz: long mode, seed {seed} (TORCHWEB_FUZZ_SEED={seed} repeats it)"])
    yield {"long": long, "seed": seed}
    say([f"\nfuzz summary ({'long mode, seed %d' % seed if long else 'CI mode'}):"] + S.STATS.lines())
    report = os.environ.get("TORCHWEB_FUZZ_REPORT")
    if report:
        with open(report, "w") as f:
            json.dump({"long": long, "seed": seed, "lines": S.STATS.lines(),
                       "examples": {f"{k[0]}/{k[1]}": v for k, v in S.STATS.examples.items()},
                       "failures": [{"signature": s, "device": d, "count": S.COLLECTOR.count[(s, d)], "message": m}
                                    for s, d, _, m in S.COLLECTOR.entries()]}, f, indent=1)


def _write(tr, lines):
    for line in lines:
        if tr is not None:
            tr.write_line(line)
        else:
            print(line)


@pytest.mark.parametrize("family", FAMILIES)
def test_fuzz(device, family, fuzz_mode):
    if not fuzz_mode["long"]:
        S.run_ci(family, device)
        return
    known = S.known_signatures(device)
    found = S.run_long(family, device, fuzz_mode["seed"])
    new = [f for f in found if f[0] not in known]
    added = S.append_regressions(new)
    if new:
        text = "\n\n".join(f"[{S.COLLECTOR.count[(sig, dev)]} examples] {msg}" for sig, dev, _, msg in new)
        pytest.fail(f"{len(new)} distinct new failures on {device} ({added} added to "
                    f"tests/fuzz_regressions.json as xfail entries):\n\n{text}", pytrace=False)


# -- the table is covered -------------------------------------------------------------------------
def test_every_table_row_is_fuzzed():
    """Every row of torchweb's elementwise table is called by the fuzz: by default as
    m.<name>(...) on both libraries, or through catalogue.ELEMENTWISE_CALLS. A new row that is
    neither fails here: map it there."""
    missing = [n for n in OPS if n not in C.ELEMENTWISE_CALLS and not C.default_callable(n)]
    assert not missing, f"elementwise table rows the fuzz cannot call: {missing} (map them in tests/fuzz/catalogue.py)"
    from fuzz.strategies import ELEMENTWISE_ROWS, INPLACE_ROWS
    assert set(ELEMENTWISE_ROWS) == set(OPS)
    # every row with an in-place form in PyTorch is fuzzed in place
    for n in OPS:
        if hasattr(torch.Tensor, n + "_") or n in C.INPLACE_CALLS:
            assert n in INPLACE_ROWS, n


def test_reductions_listed_once_exist():
    for name in C.REDUCTIONS:
        mod_t, mod_w = (torch.linalg, torchweb.linalg) if name.startswith("linalg.") else (torch, torchweb)
        short = name.split(".")[-1]
        assert hasattr(mod_t, short) and hasattr(mod_w, short), name


def test_runner_sees_a_planted_difference():
    """The runner is not vacuous: a case whose torchweb side is sabotaged fails."""
    case = {"family": "elementwise", "op": "add", "args": [
        {"tensor": {"dtype": "float32", "base": [3], "values": [1.0, "nan", "-inf"], "view": []}}, 2.0],
        "kwargs": {}}
    assert not run_case(case, "cpu").failed
    original = C.ELEMENTWISE_CALLS.get("add")
    C.ELEMENTWISE_CALLS["add"] = lambda m, a, b: m.add(a, b) if m is torch else m.sub(a, b)
    try:
        out = run_case(case, "cpu")
        assert out.failed and "value" in out.kind, out
    finally:
        if original is None:
            del C.ELEMENTWISE_CALLS["add"]
        else:
            C.ELEMENTWISE_CALLS["add"] = original
