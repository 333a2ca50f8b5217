"""The playground page's Python side, importable by the scripts it runs:

    from playground import plot
    plot(losses, title="loss")              # ys only: x is 0, 1, 2, ...
    plot(xs, ys, title="fit")               # lists, tuples or 1-D tensors

Each call sends one line plot to the page (drawn on a canvas by plot.mjs); a later call with
the same title redraws that plot (a live curve). Outside the page (CPython, the tests) the
data are kept in `figures` and nothing is drawn."""

import json
import math

figures = []      # every plot() call's data, in order
_send = None      # the worker sets this: a JS function that takes one JSON string


def _floats(values):
    if hasattr(values, "tolist"):          # a tensor: one readback
        values = values.tolist()
    return [float(v) for v in values]


def _json_safe(values):
    return [v if math.isfinite(v) else None for v in values]   # JSON has no NaN or inf


def plot(xs, ys=None, title=""):
    """Draw ys against xs (or xs against 0, 1, 2, ... when ys is left out)."""
    if ys is None:
        xs, ys = None, xs
    ys = _floats(ys)
    xs = [float(i) for i in range(len(ys))] if xs is None else _floats(xs)
    if len(xs) != len(ys):
        raise ValueError(f"plot(): {len(xs)} x values but {len(ys)} y values")
    fig = {"title": str(title), "xs": xs, "ys": ys}
    figures.append(fig)
    if _send is not None:
        _send(json.dumps({"title": fig["title"], "xs": _json_safe(xs), "ys": _json_safe(ys)}))
