"""Tier 2 from pytest: the browser tier (tests/browser/run_browser_tests.py) in a subprocess,
and a check, without a browser, that the recorded cases replay cleanly against PyTorch itself.
Deselect the browser run with -m "not browser"."""

import asyncio
import os
import subprocess
import sys

import pytest

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "browser")


@pytest.mark.browser
def test_browser_tier():
    if not os.path.exists("/usr/bin/chromium") and not os.environ.get("TORCHWEB_CHROMIUM"):
        pytest.fail("the browser tier needs Chromium (scripts/setup.sh installs it)")
    r = subprocess.run([sys.executable, os.path.join(HERE, "run_browser_tests.py"), "--quiet"],
                       capture_output=True, text=True, timeout=1500)
    out = r.stdout + r.stderr
    assert r.returncode == 0, f"browser tier failed (exit {r.returncode}):\n{out[-20000:]}"


def test_cases_replay_against_pytorch(monkeypatch):
    """replay.py run with PyTorch in torchweb's place must pass every case: this keeps
    cases.json, record_cases.py and replay.py in step."""
    torch = pytest.importorskip("torch")
    monkeypatch.setitem(sys.modules, "torchweb", torch)
    ns = {"__name__": "replay_on_pytorch"}
    with open(os.path.join(HERE, "replay.py")) as f:
        exec(compile(f.read(), "replay.py", "exec"), ns)
    ns["DEVICE"] = "cpu"
    try:
        with open(os.path.join(HERE, "cases.json")) as f:
            summary = asyncio.run(ns["replay_cases"](f.read(), ""))
    finally:
        # replay sets PyTorch's default device, a global mode that would change later tests
        # (it turns off nn.TransformerEncoder's nested-tensor fast path, for one)
        torch.set_default_device(None)
    assert summary["total"] >= 200
    assert summary["failed"] == [], summary["failed"][:10]
