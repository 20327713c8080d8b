"""The op layer imports downward only: no import cycles in tensorflux/_src/ops.

The graph is read from the source (AST), so it counts every import statement,
including those inside functions, which Python would only run later; an import
deferred into a function to dodge a cycle still counts as the cycle it dodges.
Importing `a.b.c` from outside package `a.b` also runs `a/b/__init__.py`, so that
edge counts too. See docs/architecture.md, "The op registry", for the layering.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SRC = ROOT / "tensorflux" / "_src"


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(*folders):
    """{module name: path} for every .py file under the given folders of tensorflux/_src."""
    out = {}
    for folder in folders:
        for path in sorted((SRC / folder).rglob("*.py")):
            out[_module_name(path)] = path
    return out


def _imported_names(node, module, is_package):
    """The dotted names an import statement (or importlib call) brings in."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            package = module if is_package else module.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{base}" if base else package
        return [f"{base}.{a.name}" for a in node.names] + [base]
    if isinstance(node, ast.Call):  # importlib.import_module("...") / __import__("...")
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in ("import_module", "__import__") and node.args and \
                isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            return [node.args[0].value]
    return []


def import_graph(modules):
    """{module: {imported module: line}} over `modules`, from every import in the source."""
    graph = {}
    for module, path in modules.items():
        edges = graph.setdefault(module, {})
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = _imported_names(node, module, is_package)
            if isinstance(node, ast.ImportFrom):
                # `from a.b import c`: the module a.b.c if there is one, else a.b itself.
                *submodules, base = names
                names = [n for n in submodules if n in modules] or [base]
            for name in names:
                target = name if name in modules else None
                while target is None and "." in name:
                    name = name.rpartition(".")[0]
                    target = name if name in modules else None
                if target is None:
                    continue
                # Importing a.b.c runs a/__init__ and a/b/__init__ first, unless the
                # importer is itself inside that package (then it is already running).
                parent = target
                while parent:
                    if parent != module and not module.startswith(parent + "."):
                        edges.setdefault(parent, node.lineno)
                    parent = parent.rpartition(".")[0]
    return graph


def cycles(graph):
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _describe(component, graph):
    """One cycle through the component, with the line of each import."""
    members = set(component)
    path, seen = [component[0]], {component[0]: 0}
    while True:
        here = path[-1]
        nxt = next(w for w in sorted(graph[here]) if w in members)
        if nxt in seen:
            loop = path[seen[nxt]:] + [nxt]
            break
        seen[nxt] = len(path)
        path.append(nxt)
    steps = [f"{a} (line {graph[a][b]}) -> {b}" for a, b in zip(loop, loop[1:])]
    return f"{len(component)} modules: {', '.join(component)}\n    " + "\n    ".join(steps)


def _assert_acyclic(graph):
    found = cycles(graph)
    assert not found, "import cycles:\n  " + "\n  ".join(_describe(c, graph) for c in found)


def test_the_op_layer_has_no_import_cycles():
    _assert_acyclic(import_graph(_modules("ops")))


def test_the_checker_sees_cycles_through_deferred_imports(tmp_path):
    # A cycle whose back edge is an import inside a function is still a cycle.
    graph = {"a": {"b": 1}, "b": {"c": 3}, "c": {"a": 7}, "d": {"a": 2}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert "c (line 7) -> a" in _describe(["a", "b", "c"], graph)
    src = tmp_path / "m.py"
    src.write_text("import os\n\ndef f():\n    from tensorflux._src.ops import registry\n"
                   "    importlib.import_module('tensorflux._src.ops.op_builder')\n")
    tree = ast.parse(src.read_text())
    found = [n for node in ast.walk(tree)
             for n in _imported_names(node, "tensorflux._src.ops.x", False)]
    assert "tensorflux._src.ops.registry" in found
    assert "tensorflux._src.ops.op_builder" in found


@pytest.mark.parametrize("package", ["array", "math", "nn", "linalg", "signal", "image",
                                     "random", "control", "state", "strings", "debug"])
def test_family_packages_are_folders_not_import_hubs(package):
    # A family's __init__ imports nothing: importing one of its modules must not pull in
    # the whole family (which would hide edges between families).
    init = SRC / "ops" / package / "__init__.py"
    tree = ast.parse(init.read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
