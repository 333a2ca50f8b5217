"""`scripts/run.sh --headless` with no page runs scripts/run_gallery.py: every gallery page in
headless Chromium, one line per page (adapter, time to the first result, the page's result),
exit status 1 if any page fails. Here with the Hello page, whose result must equal PyTorch's
matmul, and a page that fails (Pyodide asked from another origin, which site/boot.mjs refuses):
main() prints both lines and returns 1. The full gallery (train, search, GPT, playground) takes
minutes on SwiftShader: each has its own page test."""

import ast
import io
import os
import re
import subprocess
import sys

import pytest
import torch

from page_helpers import ROOT, publish_site, require_chromium

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import run_gallery  # noqa: E402

HELLO = next(p for p in run_gallery.PAGES if p["name"] == "hello")
BROKEN = dict(HELLO, name="broken", url="hello.html?pyodide=https://pyodide.invalid/")


def test_every_gallery_page_has_a_short_run():
    names = [p["name"] for p in run_gallery.PAGES]
    assert names == ["index", "hello", "train", "minilm", "gpt", "lm", "playground"]
    for p in run_gallery.PAGES:
        assert os.path.exists(os.path.join(run_gallery.SITE, p["url"].split("?")[0])), p["url"]
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "run_gallery.py"), "--only", "nope"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "unknown pages ['nope']" in r.stderr


@pytest.mark.browser
def test_gallery_lines_and_exit_status(monkeypatch):
    require_chromium("the headless gallery")
    publish_site()
    out = io.StringIO()
    monkeypatch.setattr(run_gallery, "PAGES", [HELLO, BROKEN])
    monkeypatch.setattr(sys, "argv", ["run_gallery.py", "--no-build", "--timeout", "120"])
    monkeypatch.setattr(sys, "stdout", out)
    assert run_gallery.main() == 1
    text = out.getvalue()
    lines = text.splitlines()
    hello = next(ln for ln in lines if ln.startswith("hello "))
    m = re.match(r"hello\s+DONE\s+adapter: (.+?) \| first result: ([\d.]+) s \| (\[\[.*\]\])$", hello)
    assert m, text
    assert m.group(1) != "-" and float(m.group(2)) > 0
    want = torch.arange(6.).reshape(2, 3) @ torch.tensor([[1.0, 0.0, 2.0], [0.5, -1.0, 3.0]]).T
    assert torch.equal(torch.tensor(ast.literal_eval(m.group(3))), want)
    broken = next(ln for ln in lines if ln.startswith("broken "))
    assert re.match(r"broken\s+ERROR\s", broken), text
    assert "Pyodide must come from this site" in text   # the page's own error, shown under its line
    assert lines[-1] == "1 of 2 pages DONE; failed: broken"
