"""The case format: plain JSON, so that a failing case can be saved and replayed.

A case is a dict: {"family": ..., "op": ..., "args": [arg, ...], "kwargs": {name: arg}, ...}
plus what a family needs (a view chain, a write, a gradient chain). An arg is
  {"tensor": {"dtype": "float32", "base": [4, 5], "values": [...], "view": [step, ...]}}
        a tensor: a contiguous base of shape `base` holding `values` (flat, row-major; or
        {"seed": n, "mode": m} for big tensors: numpy-generated) and the view `view` of it, the
        same steps on both sides: ["permute", dims], ["slice", dim, start, stop, step],
        ["expand", shape], ["transpose", d0, d1], ["narrow", dim, start, length],
        ["select", dim, index], ["unsqueeze", dim], ["view", shape], ["reshape", shape],
        ["flatten", start, end], ["getitem", index]
  {"float": "nan"}        a Python float JSON cannot hold: "nan", "inf", "-inf", "-0.0"
  {"dtype": "int64"}      a dtype of the library that runs the case
  {"tuple": [...]}        a tuple (dims); {"slice": [a, b, c]}; {"ellipsis": true}
  anything else           itself (int, float, bool, str, None, list)
"""

import json

import numpy as np
import torch

import torchweb
from . import values as V

TORCH_DTYPE = {"float32": torch.float32, "float16": torch.float16, "int32": torch.int32,
               "int64": torch.int64, "bool": torch.bool, "uint8": torch.uint8}
NP_DTYPE = {"float32": np.float32, "float16": np.float16, "int32": np.int32, "int64": np.int64,
            "bool": np.bool_, "uint8": np.uint8}


def dtype_of(m, name):
    return TORCH_DTYPE[name] if m is torch else getattr(torchweb, name)


def dtype_name(dt):
    return str(dt).replace("torch.", "") if isinstance(dt, torch.dtype) else dt.name


# -- building tensors -------------------------------------------------------------------------
def base_array(spec):
    """The base's values as a numpy array of its dtype and shape."""
    dt, shape = spec["dtype"], tuple(spec["base"])
    vals = spec["values"]
    if isinstance(vals, dict):
        n = int(np.prod(shape, dtype=np.int64))
        arr = V.seeded_values(dt, n, vals["seed"], vals.get("mode", "mixed"))
        if "clip" in vals:  # keep values a conversion can take (see strategies.restrict)
            lo, hi = vals["clip"]
            arr = np.clip(np.nan_to_num(arr.astype(np.float64), nan=0.0), lo, hi)
    else:
        arr = np.array(V.dec_values(vals), dtype=np.float64 if dt in V.FLOATS else None)
    return arr.astype(NP_DTYPE[dt]).reshape(shape)


def make_base(m, spec, device):
    arr = base_array(spec)
    if m is torch:
        return torch.from_numpy(arr.copy())
    dt = getattr(torchweb, spec["dtype"])
    if arr.size == 0:
        return torchweb.zeros(arr.shape, dtype=dt, device=device)
    if arr.size > 4096:  # through numpy: fast for big tensors
        return torchweb.tensor(arr, dtype=dt, device=device)
    return torchweb.tensor(arr.tolist(), dtype=dt, device=device)


def apply_step(x, step):
    kind, *a = step
    if kind == "permute":
        return x.permute(*a[0])
    if kind == "slice":
        d, start, stop, stride = a
        return x[(slice(None),) * d + (slice(start, stop, stride),)]
    if kind == "expand":
        return x.expand(*a[0])
    if kind == "transpose":
        return x.transpose(a[0], a[1])
    if kind == "narrow":
        return x.narrow(*a)
    if kind == "select":
        return x.select(*a)
    if kind == "unsqueeze":
        return x.unsqueeze(a[0])
    if kind == "view":
        return x.view(*a[0])
    if kind == "reshape":
        return x.reshape(*a[0])
    if kind == "flatten":
        return x.flatten(*a)
    if kind == "t":
        return x.t()
    if kind == "getitem":
        return x[decode(a[0], torch, "cpu")]
    raise ValueError(f"unknown view step {step}")


def make_tensor(m, spec, device):
    """(view, base): the tensor a spec describes, on `device` for torchweb."""
    base = make_base(m, spec, device)
    x = base
    for step in spec.get("view", []):
        x = apply_step(x, step)
    if spec.get("grad"):
        x.requires_grad_(True)
    return x, base


# -- arguments ----------------------------------------------------------------------------------
class Built:
    """Arguments built for one library; remembers each tensor argument's base."""

    def __init__(self, m, device):
        self.m, self.device, self.bases = m, device, []

    def __call__(self, a):
        return decode(a, self.m, self.device, self.bases)


def decode(a, m, device, bases=None):
    if isinstance(a, dict):
        if "tensor" in a:
            x, base = make_tensor(m, a["tensor"], device)
            if bases is not None:
                bases.append(base)
            return x
        if "float" in a:
            return float(a["float"])
        if "dtype" in a:
            return dtype_of(m, a["dtype"])
        if "tuple" in a:
            return tuple(decode(v, m, device, bases) for v in a["tuple"])
        if "slice" in a:
            return slice(*a["slice"])
        if "ellipsis" in a:
            return Ellipsis
        raise ValueError(f"unknown argument {a}")
    if isinstance(a, list):
        return [decode(v, m, device, bases) for v in a]
    return a


def enc(v):
    """The JSON form of a plain Python argument (float specials, tuples, slices)."""
    if isinstance(v, float):
        e = V.enc_float(v)
        return {"float": e} if isinstance(e, str) else e
    if isinstance(v, tuple):
        return {"tuple": [enc(x) for x in v]}
    if isinstance(v, slice):
        return {"slice": [v.start, v.stop, v.step]}
    if v is Ellipsis:
        return {"ellipsis": True}
    if isinstance(v, list):
        return [enc(x) for x in v]
    return v


def tensor_arg(dtype, base, values, view=(), grad=False):
    spec = {"dtype": dtype, "base": list(base), "values": values, "view": [list(s) for s in view]}
    if grad:
        spec["grad"] = True
    return {"tensor": spec}


def view_shape(spec):
    """The shape of a tensor spec's view (worked out with torch on a zero-size-cheap tensor)."""
    t = torch.empty(tuple(spec["base"]), dtype=TORCH_DTYPE[spec["dtype"]])
    for step in spec.get("view", []):
        t = apply_step(t, step)
    return tuple(t.shape)


# -- describing -------------------------------------------------------------------------------
def short(a, limit=12):
    """A one-line description of an argument, for failure messages."""
    if isinstance(a, dict) and "tensor" in a:
        s = a["tensor"]
        vals = s["values"]
        if isinstance(vals, dict):
            vtxt = f"seeded{vals}"
        else:
            vtxt = "[" + ", ".join(str(v) for v in vals[:limit]) + (", ..." if len(vals) > limit else "") + "]"
        view = f" view={s['view']}" if s.get("view") else ""
        grad = " requires_grad" if s.get("grad") else ""
        try:
            shape = f" shape={list(view_shape(s))}"
        except Exception:  # noqa: BLE001 - a view PyTorch refuses: the case tests that
            shape = ""
        return f"tensor({s['dtype']}{shape} base={s['base']}{view}{grad} values={vtxt})"
    return json.dumps(a)


def describe(case):
    lines = [f"family={case['family']} op={case['op']}"]
    for i, a in enumerate(case.get("args", [])):
        lines.append(f"  arg{i}: {short(a)}")
    for k, a in case.get("kwargs", {}).items():
        lines.append(f"  {k}: {short(a)}")
    for key in ("chain", "write", "final"):
        if key in case:
            lines.append(f"  {key}: {json.dumps(case[key])}")
    return "\n".join(lines)


def dumps(case):
    return json.dumps(case, separators=(",", ":"), allow_nan=False)
