"""The import graph of src/torchweb has no circle, and imports deferred into functions say why.

Issue 19, item 1: layers import one way, so every torchweb import sits at the top of its module,
except where the import is optional (a dependency that may be missing) or picks a driver; such an
import says so with a trailing comment `# deferred: optional dependency` or
`# deferred: driver choice` (`# deferred: load time` keeps a heavy, rarely used module out of
`import torchweb`). The graph is read with `ast`, never by importing, so the test sees imports
inside functions too.

Edges: `import torchweb.a.b` is an edge to torchweb.a.b (no implicit edge to its parent packages);
`from P import x` is an edge to the submodule P.x when there is one, else to P. A package's
`__init__` re-exporting its children is no circle as long as the children never import it back.
Imports marked `# deferred:` are left out of the circle check.

Run `python tests/test_import_graph.py` for the counts (the closing note of issue 19 quotes them).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "torchweb"

ALLOWED_REASONS = ("optional dependency", "driver choice", "load time")
_MARKER = re.compile(r"#\s*deferred:\s*(.*)$")

# Modules whose violations are tolerated while a refactor is in flight (none now).
PENDING = frozenset()



class Import:
    """One torchweb-internal import statement's edge: who imports what, where, and how."""

    __slots__ = ("source", "target", "line", "deferred", "marker")

    def __init__(self, source, target, line, deferred, marker):
        self.source = source        # importing module
        self.target = target        # imported module
        self.line = line
        self.deferred = deferred    # inside a function or method
        self.marker = marker        # text after `# deferred:`, or None

    @property
    def marked(self):
        return self.marker is not None

    @property
    def allowed_marker(self):
        return self.marker is not None and self.marker.startswith(ALLOWED_REASONS)

    def __str__(self):
        where = "in a function" if self.deferred else "at module level"
        return f"{self.source} -> {self.target}  (line {self.line}, {where})"


def module_files():
    """{dotted module name: path} for every module of the package."""
    modules = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_package(name, modules):
    return modules[name].name == "__init__.py"


def _resolve(module, node, modules):
    """The torchweb modules an import statement names (a list, possibly empty)."""
    if isinstance(node, ast.Import):
        targets = []
        for alias in node.names:
            if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                targets.append(alias.name)
        return targets
    if node.level:
        base = module.split(".")
        if not _is_package(module, modules):
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        origin = ".".join(base + ([node.module] if node.module else []))
    else:
        origin = node.module or ""
    if origin != PACKAGE and not origin.startswith(PACKAGE + "."):
        return []
    targets = []
    for alias in node.names:
        sub = f"{origin}.{alias.name}"
        targets.append(sub if sub in modules else origin)
    return list(dict.fromkeys(targets))


def _marker(lines, node):
    """The reason after a `# deferred:` comment on the statement's lines, or None."""
    for text in lines[node.lineno - 1 : node.end_lineno]:
        found = _MARKER.search(text)
        if found:
            return found.group(1).strip()
    return None


def _is_type_checking(test):
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk_imports(tree):
    """(import node, inside a function?) for every import executed at run time."""
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for sub in child.orelse:
                    visit_stmt(sub, in_function)
                continue
            visit_stmt(child, in_function)

    def visit_stmt(child, in_function):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            found.append((child, in_function))
        nested = in_function or isinstance(
            child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
        )
        visit(child, nested)

    visit(tree, False)
    return found


def collect_imports():
    modules = module_files()
    imports = []
    for module, path in modules.items():
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for node, in_function in _walk_imports(ast.parse(source, str(path))):
            for target in _resolve(module, node, modules):
                if target not in modules:
                    raise AssertionError(f"{module} line {node.lineno}: no module {target}")
                if target == module:
                    continue
                imports.append(Import(module, target, node.lineno, in_function, _marker(lines, node)))
    return modules, imports


def strongly_connected(graph):
    """Tarjan's algorithm, iterative: the components of more than one node."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def circles(imports, tolerated=PENDING):
    """Import circles among the edges checked: unmarked ones leaving modules not tolerated."""
    graph, edges = {}, {}
    for imp in imports:
        if imp.marked or imp.source in tolerated:
            continue
        graph.setdefault(imp.source, set()).add(imp.target)
        edges.setdefault((imp.source, imp.target), imp)
    found = []
    for component in strongly_connected(graph):
        members = set(component)
        inside = [str(edges[pair]) for pair in sorted(edges) if pair[0] in members and pair[1] in members]
        found.append((component, inside))
    return found


def unexplained_deferrals(imports, tolerated=PENDING):
    return [imp for imp in imports if imp.deferred and not imp.allowed_marker and imp.source not in tolerated]


def counts(imports):
    """(number of torchweb imports inside functions, {their marker's reason or "unmarked": count})."""
    deferred = [imp for imp in imports if imp.deferred]
    by_reason = {}
    for imp in deferred:
        key = next((r for r in ALLOWED_REASONS if (imp.marker or "").startswith(r)), imp.marker or "unmarked")
        by_reason[key] = by_reason.get(key, 0) + 1
    return len(deferred), by_reason


def _summary(imports):
    total, by_reason = counts(imports)
    reasons = ", ".join(f"{k}: {v}" for k, v in sorted(by_reason.items()))
    return f"{total} torchweb imports deferred into functions ({reasons})"


def test_no_import_circle():
    _, imports = collect_imports()
    found = circles(imports)
    report = []
    for component, inside in found:
        report.append(f"circle of {len(component)} modules: {', '.join(component)}")
        report.extend("    " + edge for edge in inside)
    assert not found, "\n".join(report + [_summary(imports)])


def test_deferred_imports_say_why():
    _, imports = collect_imports()
    bad = unexplained_deferrals(imports)
    allowed = " / ".join(f"'# deferred: {reason}'" for reason in ALLOWED_REASONS)
    report = [f"torchweb imports inside functions without {allowed}:"]
    report.extend("    " + str(imp) + (f"  [marker: {imp.marker}]" if imp.marker else "") for imp in bad)
    assert not bad, "\n".join(report + [_summary(imports)])


def test_pending_sets_name_real_modules():
    modules = module_files()
    assert not PENDING - set(modules), sorted(PENDING - set(modules))


def test_graph_sees_circles_and_deferrals():
    """The checker itself: a two-module circle and an unmarked deferral are found."""
    a = Import("torchweb.a", "torchweb.b", 1, False, None)
    b = Import("torchweb.b", "torchweb.a", 5, True, None)
    assert circles([a, b], tolerated=frozenset()) == [
        (["torchweb.a", "torchweb.b"], [str(a), str(b)])
    ]
    assert unexplained_deferrals([a, b], tolerated=frozenset()) == [b]
    marked = Import("torchweb.b", "torchweb.a", 5, True, "driver choice")
    assert circles([a, marked], tolerated=frozenset()) == []
    assert unexplained_deferrals([a, marked], tolerated=frozenset()) == []
    wrong = Import("torchweb.b", "torchweb.a", 5, True, "it was easier")
    assert unexplained_deferrals([a, wrong], tolerated=frozenset()) == [wrong]


if __name__ == "__main__":
    _, all_imports = collect_imports()
    print(_summary(all_imports))
    everything = circles(all_imports, tolerated=frozenset())
    print(f"circles counting every module: {[len(c) for c, _ in everything]}")
    print(f"circles outside the pending sets: {[len(c) for c, _ in circles(all_imports)]}")
    print(f"unexplained deferrals outside the pending sets: {len(unexplained_deferrals(all_imports))}")
