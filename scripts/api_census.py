"""A census of PyTorch's public API against torchweb's, from the installed PyTorch (2.13).

    python scripts/api_census.py            # writes docs/api.md and prints the counts
    python scripts/api_census.py --missing  # also prints each missing name

Every public name of each namespace below (dir(), minus submodules and typing re-exports) is
classified:

- works: torchweb has it, and a test file names it (tests/*.py compare with PyTorch);
- untested: torchweb has it, and no test names it;
- refused: torchweb does not have it (hasattr is False, so feature probes take their fallback),
  and asking for it raises an AttributeError that says why (src/torchweb/_refused.py);
- missing: neither.

`keyword_misses()` compares the keyword names PyTorch's signatures accept (the aten schemas for
builtins, with `self` as `input` and out arguments as `out`; inspect.signature for Python
functions) with what torchweb's functions and methods accept. tests/test_api_census.py fails on
a missing name in the covered namespaces and on any keyword miss.
"""

import collections
import inspect
import os
import re
import sys
import typing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

# (label, dotted path under torch / torchweb, covered by issue 18's "no missing name" rule)
NAMESPACES = [
    ("torch", "", True),
    ("Tensor", "Tensor", True),
    ("nn", "nn", True),
    ("nn.functional", "nn.functional", True),
    ("nn.init", "nn.init", True),
    ("nn.utils", "nn.utils", True),
    ("optim", "optim", True),
    ("optim.lr_scheduler", "optim.lr_scheduler", True),
    ("autograd", "autograd", True),
    ("utils.data", "utils.data", True),
    ("special", "special", True),
    ("linalg", "linalg", True),
    ("fft", "fft", True),
    ("distributions", "distributions", True),
    ("func", "func", True),
]

_TYPING_MODULES = {"typing", "typing_extensions", "collections.abc", "abc", "builtins", "types",
                   "dataclasses", "enum", "functools", "warnings"}


def resolve(root, path):
    obj = root
    for part in path.split(".") if path else ():
        obj = getattr(obj, part)
    return obj


def _is_reexport(obj, name):
    """A name a module imported for its own use (typing helpers, stdlib), not PyTorch's API."""
    if name == "TYPE_CHECKING" or isinstance(obj, (typing.TypeVar, getattr(typing, "ParamSpec", ()))):
        return True
    mod = getattr(obj, "__module__", None)
    if mod in _TYPING_MODULES and not inspect.isclass(obj):
        return True
    if mod in ("typing", "typing_extensions"):
        return True
    return type(obj).__module__ in ("typing", "typing_extensions")


def _foreign_class(obj, torch_ns):
    """A class a submodule imported from elsewhere (nn.functional's Tensor, autograd's
    Mapping): not that namespace's own API."""
    home = getattr(torch_ns, "__name__", "")
    if not inspect.isclass(obj) or not inspect.ismodule(torch_ns) or home == "torch":
        return False
    return not (getattr(obj, "__module__", "") or "").startswith(home)


def public_names(torch_ns):
    names = []
    for name in sorted(dir(torch_ns)):
        if name.startswith("_"):
            continue
        try:
            obj = getattr(torch_ns, name)
        except Exception:   # (a few deprecated names warn or raise on access)
            continue
        if inspect.ismodule(obj) or _is_reexport(obj, name) or _foreign_class(obj, torch_ns):
            continue
        if isinstance(obj, dict):   # docstring fragments (reproducibility_notes, common_args, ...)
            continue
        names.append(name)
    return names


_tested_words = None


def tested_words():
    """Every identifier that appears in a test file (the proxy for "a test compares it")."""
    global _tested_words
    if _tested_words is None:
        words = set()
        tests = os.path.join(ROOT, "tests")
        for dirpath, _, files in os.walk(tests):
            for f in files:
                if f.endswith(".py"):
                    with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                        words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", fh.read()))
        _tested_words = words
    return _tested_words


def _refusal(ours_ns, name):
    """The refusal message, if asking torchweb for the name raises one of ours."""
    try:
        getattr(ours_ns, name)
    except AttributeError as e:
        msg = str(e)
        return msg if "torchweb" in msg and ("not supported" in msg or "instead" in msg or "refused" in msg) else None
    except Exception:
        return None
    return None


def classify(label, path):
    import torch
    import torchweb
    theirs = resolve(torch, path)
    try:
        ours = resolve(torchweb, path)
    except AttributeError:
        ours = None
    rows = []
    words = tested_words()
    for name in public_names(theirs):
        if ours is not None and hasattr(ours, name):
            status = "works" if name in words else "untested"
            reason = ""
        else:
            reason = _refusal(ours, name) if ours is not None else None
            status = "refused" if reason else "missing"
        rows.append((name, status, reason or ""))
    return rows


def census():
    """{label: [(name, status, reason)]} for every namespace."""
    return {label: classify(label, path) for label, path, _ in NAMESPACES}


# ---- keyword names -------------------------------------------------------------------------

def _stub_keywords():
    """{stub: {function name: keyword names}} from PyTorch's type stubs (torch/_C/*.pyi), which
    are generated from the same declarations as its Python bindings: the union over a function's
    overloads of the names it takes (a `*size` vararg counts: its sequence overload takes size=)."""
    import ast
    import torch
    stubs = os.path.join(os.path.dirname(torch.__file__), "_C")
    out = {}
    for stub, cls in (("_VariableFunctions.pyi", None), ("__init__.pyi", "TensorBase"),
                      ("_nn.pyi", None), ("_special.pyi", None)):
        table = out[cls or stub] = collections.defaultdict(set)
        path = os.path.join(stubs, stub)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            tree = ast.parse(f.read())
        body = tree.body
        if cls is not None:
            body = next(n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
        for node in body:
            if isinstance(node, ast.FunctionDef):
                a = node.args
                names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
                if a.vararg is not None:
                    names.append(a.vararg.arg)
                table[node.name].update(n for n in names if n != "self")
    return out


def _accepted(fn):
    """Keyword names fn accepts, "any" for **kwargs, None when it has no signature."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = sig.parameters.values()
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return "any"
    return {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _wanted(theirs, name, stub, method):
    """The keywords PyTorch's function (or method) takes: its Python signature, or for a
    builtin, its stub's overloads."""
    if inspect.isfunction(theirs):
        try:
            params = list(inspect.signature(theirs).parameters.values())[1 if method else 0:]
        except (TypeError, ValueError):
            return set()
        return {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    names = set(stub.get(name, ()))
    # PyTorch's argument parser takes NumPy's names for dim and keepdim in every builtin
    # (torch/csrc/utils/python_arg_parser.cpp; its aliases of input and other, x/a/x1/x2,
    # are left out: no real program we found uses them)
    if "dim" in names:
        names.add("axis")
    if "keepdim" in names:
        names.add("keepdims")
    return names


# keywords PyTorch 2.13's stubs list that its bindings refuse (checked by calling PyTorch):
# x.floor_divide(y, out=...), x.requires_grad_(mode=...), set_num_threads(num=...) raise TypeError there
_STUB_QUIRKS = {"Tensor.floor_divide": {"out"}, "Tensor.requires_grad_": {"mode"},
                "torch.set_num_threads": {"num"}, "torch.set_num_interop_threads": {"num"}}


def keyword_misses():
    """{qualified name: sorted keywords PyTorch accepts and torchweb's function rejects}."""
    import torch
    import torchweb
    stubs = _stub_keywords()
    variable = stubs["_VariableFunctions.pyi"]
    special = {k.replace("special_", "", 1): v for k, v in stubs["_special.pyi"].items()}
    misses = {}
    for label, torch_ns, ours_ns, method, stub in (
            ("torch", torch, torchweb, False, variable),
            ("Tensor", torch.Tensor, torchweb.Tensor, True, stubs["TensorBase"]),
            ("nn.functional", torch.nn.functional, torchweb.nn.functional, False,
             {**variable, **stubs["_nn.pyi"]}),
            ("nn.init", torch.nn.init, torchweb.nn.init, False, {}),
            ("special", torch.special, torchweb.special, False, special)):
        for name in public_names(torch_ns):
            if not hasattr(ours_ns, name):
                continue
            theirs = getattr(torch_ns, name)
            if inspect.isclass(theirs) or not callable(theirs):
                continue
            if method and isinstance(inspect.getattr_static(torch_ns, name), property):
                continue
            want = _wanted(theirs, name, stub, method)
            got = _accepted(getattr(ours_ns, name))
            if got is None or got == "any":
                continue
            lacking = want - got - _STUB_QUIRKS.get(f"{label}.{name}", set())
            if lacking:
                misses[f"{label}.{name}"] = sorted(lacking)
    return misses


# ---- docs/api.md ---------------------------------------------------------------------------

def render(result):
    lines = ["# PyTorch's API in torchweb", "",
             "Written by `scripts/api_census.py` from the installed PyTorch (checked by",
             "`tests/test_api_census.py`): every public name of each namespace, and whether torchweb",
             "has it. **works**: torchweb has it and a test names it (tests compare with PyTorch);",
             "**untested**: torchweb has it, no test names it yet; **refused**: not there, and asking",
             "for it raises an `AttributeError` that says why (so `hasattr` is False and code that",
             "probes for a feature takes its fallback); **missing**: not there yet.", "",
             "| namespace | names | works | untested | refused | missing |", "| --- | --- | --- | --- | --- | --- |"]
    for label, path, _ in NAMESPACES:
        c = collections.Counter(s for _, s, _ in result[label])
        lines.append(f"| {_title(label)} | {len(result[label])} | {c['works']} | {c['untested']} | "
                     f"{c['refused']} | {c['missing']} |")
    for label, path, _ in NAMESPACES:
        lines += ["", f"## {_title(label)}", "", "| name | status | why |", "| --- | --- | --- |"]
        for name, status, reason in result[label]:
            why = reason.replace("|", "\\|").replace("\n", " ")
            lines.append(f"| `{name}` | {status} | {why} |")
    return "\n".join(lines) + "\n"


def _title(label):
    return "torch" if label == "torch" else ("torch.Tensor" if label == "Tensor" else "torch." + label)


def main(argv):
    result = census()
    with open(os.path.join(ROOT, "docs", "api.md"), "w") as f:
        f.write(render(result))
    for label, path, covered in NAMESPACES:
        c = collections.Counter(s for _, s, _ in result[label])
        print(f"{_title(label):26} {len(result[label]):4} names: works {c['works']:4}  untested "
              f"{c['untested']:4}  refused {c['refused']:4}  missing {c['missing']:4}"
              f"{'' if covered else '  (not covered yet)'}")
        if "--missing" in argv:
            miss = [n for n, s, _ in result[label] if s == "missing"]
            if miss:
                print("    missing:", " ".join(miss))
    if "--keywords" in argv:
        for k, v in sorted(keyword_misses().items()):
            print(k, v)


if __name__ == "__main__":
    main(sys.argv[1:])
