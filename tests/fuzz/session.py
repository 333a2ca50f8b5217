"""Modes, budgets, counters, the long mode's collector, and the regressions file.

CI mode: derandomized hypothesis, no database, a fixed number of examples per family and
device; a failure fails the test with the (shrunk) case, unless its signature is a known bug:
an entry of tests/fuzz_regressions.json with an xfail_reason for that device (counted as
"known" in the summary; its own regression test is an xfail(strict=True) that turns red once
the bug is fixed, which is when its entry must lose the marker).

Long mode (pytest --fuzz-long, or TORCHWEB_FUZZ=long): many more examples, a random seed
(printed; TORCHWEB_FUZZ_SEED=n repeats a run), every failure collected instead of stopping the
run, each new signature shrunk by hypothesis, and the new ones appended to
tests/fuzz_regressions.json (deduplicated) as xfail entries; the test fails at the end listing
them.
"""

import hashlib
import json
import os
import random
import re
import time
from collections import Counter, defaultdict

from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hyp_seed

from .case import dumps
from .runner import run_case
from .strategies import FAMILIES

HERE = os.path.dirname(os.path.abspath(__file__))
REGRESSIONS = os.environ.get("TORCHWEB_FUZZ_REGRESSIONS") or os.path.join(os.path.dirname(HERE), "fuzz_regressions.json")

# Examples per family and device. CI: the whole fuzz (both devices) in ~2-4 minutes on a
# 2-core machine with lavapipe. Long: >= 20,000 over the families and devices in one run.
CI_EXAMPLES = {"elementwise": 1400, "operator": 700, "inplace": 700, "reduction": 1100, "matmul": 450,
               "view_write": 700, "grad": 700}
LONG_EXAMPLES = {"elementwise": 3000, "operator": 1200, "inplace": 1500, "reduction": 2000, "matmul": 800,
                 "view_write": 1000, "grad": 1000}
HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
          HealthCheck.large_base_example]


def long_mode(config=None):
    if os.environ.get("TORCHWEB_FUZZ", "").lower() == "long":
        return True
    return bool(config is not None and config.getoption("--fuzz-long", default=False))


# -- counters -------------------------------------------------------------------------------
class Stats:
    def __init__(self):
        self.examples = Counter()
        self.failures = Counter()
        self.known = Counter()
        self.deviations = defaultdict(Counter)
        self.seconds = Counter()
        self.shrinks = Counter()

    def record(self, family, device, outcome, known=False):
        key = (family, device)
        self.examples[key] += 1
        if outcome.status == "deviation":
            self.deviations[key][outcome.deviation] += 1
        elif outcome.failed:
            (self.known if known else self.failures)[key] += 1

    def lines(self):
        out = []
        for key in sorted(self.examples):
            dev = ", ".join(f"{k}={v}" for k, v in sorted(self.deviations[key].items())) or "none"
            out.append(f"  {key[0]:>11}/{key[1]:<6} {self.examples[key]:>6} examples, "
                       f"{self.failures[key]} failing, {self.known[key]} known bugs, deviations: {dev} "
                       f"({self.seconds[key]:.0f}s" + (f", {self.shrinks[key]} shrink steps)" if self.shrinks[key] else ")"))
        total = sum(self.examples.values())
        out.append(f"  total: {total} examples, {sum(self.failures.values())} failing, "
                   f"{sum(self.known.values())} known bugs, "
                   f"{sum(sum(c.values()) for c in self.deviations.values())} documented deviations")
        return out


STATS = Stats()


# -- the regressions file -------------------------------------------------------------------------
def load_regressions():
    if not os.path.exists(REGRESSIONS):
        return {"cases": []}
    with open(REGRESSIONS) as f:
        return json.load(f)


def case_id(case):
    return hashlib.sha1(dumps(case).encode()).hexdigest()[:12]


def known_signatures(device):
    """The failure signatures (patterns, see matches(): an entry's "matches", else its signature)
    of the known bugs on `device`: the xfail entries of the regressions file."""
    out = Known()
    for e in load_regressions().get("cases", []):
        if e.get("xfail_reason") and device in e.get("xfail_devices", ["cpu", "webgpu"]):
            out.update(e.get("matches", [e["signature"]]))
    return out


class Known(set):
    def __contains__(self, sig):
        return any(matches(sig, p) for p in self)


def matches(sig, pattern):
    """Whether a failure signature matches a pattern where '*' is any text (and nothing else
    is special: signatures hold brackets, as in value[float16])."""
    return re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), sig, re.S) is not None


def append_regressions(found):
    """found: [(signature, device, case, message)]: add the new ones (by case and by signature
    and device) to the regressions file, as xfail entries. Returns how many were added."""
    data = load_regressions()
    cases = data.setdefault("cases", [])
    ids = {e["id"] for e in cases}
    sigs = {(e["signature"], d) for e in cases for d in e.get("xfail_devices", ["cpu", "webgpu"])}
    added = 0
    for sig, device, case, message in found:
        cid = case_id(case)
        if cid in ids:
            for e in cases:
                if e["id"] == cid and device not in e.get("xfail_devices", []):
                    e.setdefault("xfail_devices", []).append(device)
            continue
        if (sig, device) in sigs:
            continue
        ids.add(cid)
        sigs.add((sig, device))
        cases.append({"id": cid, "signature": sig, "found": message.split("\ncase: ")[0][:2000],
                      "xfail_reason": f"found by the long fuzz on {time.strftime('%Y-%m-%d')}, not yet triaged",
                      "xfail_devices": [device], "case": case})
        added += 1
    with open(REGRESSIONS, "w") as f:
        json.dump(data, f, indent=1, allow_nan=False)
        f.write("\n")
    return added


# -- running a family -----------------------------------------------------------------------------
class FuzzFailure(AssertionError):
    pass


def run_ci(family, device):
    known = known_signatures(device)
    strategy = FAMILIES[family](long=False)
    t0 = time.time()

    @settings(max_examples=CI_EXAMPLES[family], derandomize=True, database=None, deadline=None,
              suppress_health_check=HEALTH, print_blob=False)
    @given(case=strategy)
    def fuzz(case):
        out = run_case(case, device)
        is_known = out.failed and out.kind in known
        if shrinking:
            STATS.shrinks[(family, device)] += 1    # hypothesis shrinking the failure below
        else:
            STATS.record(family, device, out, known=is_known)
        if out.failed and not is_known:
            shrinking.append(True)
            raise FuzzFailure(out.message)

    shrinking = []

    try:
        fuzz()
    finally:
        STATS.seconds[(family, device)] += time.time() - t0


class Collector:
    """The long mode's failures: per signature, the shrunk case first, then others."""

    def __init__(self):
        self.by_sig = {}          # (sig, device) -> [case, message, shrunk]
        self.count = Counter()

    def add(self, sig, device, case, message, shrunk=False):
        self.count[(sig, device)] += 1
        cur = self.by_sig.get((sig, device))
        if cur is None or (shrunk and not cur[2]):
            self.by_sig[(sig, device)] = [case, message, shrunk]

    def entries(self):
        return [(sig, dev, c, m) for (sig, dev), (c, m, _) in sorted(self.by_sig.items())]


COLLECTOR = Collector()


def long_seed():
    s = os.environ.get("TORCHWEB_FUZZ_SEED")
    return int(s) if s else random.SystemRandom().randrange(2 ** 31)


def run_long(family, device, base_seed, total=None, batch=250):
    """Run `total` examples in batches; each new failure signature stops its batch and is shrunk
    by hypothesis; known and already-seen ones are collected without stopping."""
    known = known_signatures(device)
    strategy = FAMILIES[family](long=True)
    total = total or int(LONG_EXAMPLES[family] * float(os.environ.get("TORCHWEB_FUZZ_SCALE", "1")))
    shrunk = set()
    t0 = time.time()
    i = 0
    while STATS.examples[(family, device)] < total:
        state = {"target": None, "last": None}

        @settings(max_examples=min(batch, total - STATS.examples[(family, device)]), derandomize=False,
                  database=None, deadline=None, suppress_health_check=HEALTH, print_blob=False)
        @hyp_seed(base_seed * 1000 + i)
        @given(case=strategy)
        def fuzz(case):
            out = run_case(case, device)
            is_known = out.failed and out.kind in known
            if state["target"] is None:
                STATS.record(family, device, out, known=is_known)
            else:
                STATS.shrinks[(family, device)] += 1     # hypothesis shrinking a failure
                if out.failed and out.kind != state["target"]:
                    COLLECTOR.add(out.kind, device, case, out.message)
                if out.kind == state["target"]:
                    state["last"] = (case, out)
                    raise FuzzFailure(out.message)
                return
            if not out.failed:
                return
            if is_known or out.kind in shrunk:
                COLLECTOR.add(out.kind, device, case, out.message)
                return
            state["target"] = out.kind
            state["last"] = (case, out)
            raise FuzzFailure(out.message)

        before = STATS.examples[(family, device)]
        try:
            fuzz()
        except Exception:  # noqa: BLE001 - a shrunk failure (or hypothesis giving up on one)
            pass
        if state["last"] is not None:
            case, out = state["last"]
            COLLECTOR.add(out.kind, device, case, out.message, shrunk=True)
            shrunk.add(out.kind)
        i += 1
        if STATS.examples[(family, device)] == before:
            break
    STATS.seconds[(family, device)] += time.time() - t0
    return [e for e in COLLECTOR.entries() if e[1] == device and e[0].split(":")[0] == family]
