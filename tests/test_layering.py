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


def _statements(tree, deferred):
    """Every node of the module, or (deferred=False) only what runs when it is imported:
    top-level statements and those in top-level if/try blocks, not function bodies."""
    if deferred:
        yield from ast.walk(tree)
        return
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            todo.extend(node.body + node.orelse + getattr(node, "finalbody", [])
                        + [s for h in getattr(node, "handlers", []) for s in h.body])
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, ast.expr))


def import_graph(modules, deferred=True):
    """{module: {imported module: line}} over `modules`, from every import in the source
    (deferred=False: only those that run when the module is imported)."""
    graph = {}
    for module, path in modules.items():
        edges = graph.setdefault(module, {})
        is_package = path.name == "__init__.py"
        for node in _statements(ast.parse(path.read_text(), str(path)), deferred):
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


def test_the_framework_has_no_import_cycles():
    _assert_acyclic(import_graph(_modules("framework")))


# The framework's only imports of higher layers: TF1 API methods that build ops or write
# formats. Each is deferred (inside the method) and none may be added silently.
FRAMEWORK_UP_CALLS = {
    # Graph.create_op / Graph.op_def_for_type: TF1's low-level op constructor.
    ("framework.graph", "ops.op_builder"),
    ("framework.graph", "ops.registry"),
    # Graph.as_graph_def: the GraphDef writer sits with the other formats in io/.
    ("framework.graph", "io.graph_def"),
    # convert_to_tensor makes a Const op for Python and numpy values.
    ("framework.tensor_conversion", "ops.constant"),
    # A traced function's captured tensors become placeholders.
    ("framework.func_graph", "ops.constant"),
    # SparseTensor.shape reads the static value of dense_shape (constant folding).
    ("framework.sparse_tensor", "ops.shape_fns"),
    # IndexedSlices.shape too, for its dense_shape.
    ("framework.indexed_slices", "ops.shape_fns"),
}


def _up_calls(graph, modules):
    """(framework module, module of a higher layer) pairs; packages (reached by importing
    their modules) left out."""
    prefix = "tensorflux._src."
    return {(module[len(prefix):], target[len(prefix):])
            for module, edges in graph.items() if module.startswith(prefix + "framework.")
            for target in edges if target.startswith(prefix)
            and not target.startswith(prefix + "framework.")
            and modules[target].name != "__init__.py"}


def test_the_framework_reaches_up_only_through_its_known_deferred_calls():
    modules = _modules(".")
    assert _up_calls(import_graph(modules), modules) == FRAMEWORK_UP_CALLS
    assert _up_calls(import_graph(modules, deferred=False), modules) == set()


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


# tensorflux/_src never imports the public package (`tensorflux`, `tensorflux.nn`,
# `from tensorflux import models`, ...): the public API is the top layer, and importing
# any of it runs tensorflux/__init__, which imports most of _src. Each exception below
# is a module that still does, with the reason; none may be added silently, and a module
# that stops importing the public package must be removed from the list.
PUBLIC_API_IMPORTERS = {
    # The CLI's jobs sit on top of everything: they run user-facing TF1 programs (train,
    # eval, bench, export) through the public API and the public model zoo (tensorflux.models,
    # tensorflux.datasets), which live above _src.
    "cli.bench_job", "cli.bench_step", "cli.classifiers", "cli.data_source",
    "cli.eval_job", "cli.export_job", "cli.model_graph", "cli.place_job", "cli.place_measure",
    "cli.placement_models", "cli.ps_train_job", "cli.serve_job",
    "cli.automl_job", "cli.automl_serve",
    "cli.teacher", "cli.train_job",
    # The playground, like the CLI's jobs, builds a user-facing TF1 network (and exports
    # it as a SavedModel) through the public API.
    "playground.network",
    # AutoML's networks are user-facing TF1 programs (tf.layers, Adam, a Session), built
    # through the public API like the playground's network.
    "automl.networks",
    # Not yet fixed (deferred imports inside functions): tf.layers reach tensorflux.nn
    # because the nn namespace gathers families defined in several _src modules.
    "layers.convolutional", "layers.core", "layers.losses_impl", "layers.normalization",
    "layers.pooling", "layers.regularizers",
    # Not yet fixed: the parameter-server trainer builds its graph through the public API.
    "distribute.ps.model_layout", "distribute.ps.ps_task", "distribute.ps.trainer",
    "distribute.ps.worker_task",
    # Not yet fixed: the sync-replicas train op is built through the public API.
    "train.sync_replicas_optimizer",
}


def _public_api_imports():
    """{module under _src (without the prefix): first line importing the public API}."""
    prefix = "tensorflux._src."
    found = {}
    for module, path in _modules(".").items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = _imported_names(node, module, is_package)
            if any(n == "tensorflux" or (n.startswith("tensorflux.")
                                         and not n.startswith("tensorflux._src"))
                   for n in names):
                found.setdefault(module[len(prefix):], node.lineno)
    return found


def test_src_does_not_import_the_public_package():
    found = _public_api_imports()
    new = {m: line for m, line in found.items() if m not in PUBLIC_API_IMPORTERS}
    assert not new, ("tensorflux/_src imports the public package (import the internal "
                     f"module that defines the name instead): {new}")
    stale = PUBLIC_API_IMPORTERS - set(found)
    assert not stale, f"no longer import the public package, drop from the list: {stale}"


def test_the_canned_estimators_reach_no_public_name():
    # The estimators and their canned models import only _src modules, at top level.
    assert not {m for m in _public_api_imports() if m.startswith("estimator")}
