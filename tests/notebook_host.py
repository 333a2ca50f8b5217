"""Run a course notebook's cells tagged "host" (site/notebooks/*.ipynb) in CPython with the host's
real PyTorch as `torch` and device "cpu": the oracle the JupyterLite test compares the page's
printed lines with. The other cells (%pip, WebGPU start, fetches, the live plot) are the page's;
their names are given here (digits, SITE, WEIGHTS_URL, LivePlot)."""

import contextlib
import io
import json
import re

NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


class NoPlot:
    def __init__(self, *args, **kwargs):
        pass

    def update(self, ys):
        pass


def cells(path, tag=None):
    with open(path) as f:
        nb = json.load(f)
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code" and
            (tag is None or tag in c["metadata"].get("tags", []))]


def printed(text):
    """{"key": "rest"} of each `key: rest` line printed."""
    out = {}
    for line in text.splitlines():
        line = line.split("\r")[-1]
        if ": " in line:
            key, rest = line.split(": ", 1)
            out[key.strip()] = rest.strip()
    return out


def numbers(text):
    return [float(v) for v in NUMBER.findall(text)]


def run_host(path, **names):
    """printed() of the notebook's "host" cells run with torch and names."""
    import torch
    ns = {"__name__": "__main__", "torch": torch, "device": "cpu", "LivePlot": NoPlot, **names}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for src in cells(path, "host"):
            exec(compile(src, path, "exec"), ns)
    return printed(out.getvalue())
