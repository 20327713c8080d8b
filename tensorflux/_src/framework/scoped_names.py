"""Names relative to a scope, for graphs exported under `export_scope` and imported under
`import_scope` (TF's ops.strip_name_scope / prepend_name_scope, for MetaGraphs,
VariableDefs and SavedModels). A control input's "^" stays in front."""

from __future__ import annotations


def strip_scope(name: str, scope):
    """`name` without `scope/`; None when `name` is outside the scope; `name` itself
    when there is no scope."""
    if not scope:
        return name
    caret = "^" if name.startswith("^") else ""
    bare = name[len(caret):]
    prefix = scope.rstrip("/") + "/"
    return caret + bare[len(prefix):] if bare.startswith(prefix) else None


def prepend_scope(name: str, scope):
    """`scope/name` (`name` itself when there is no scope)."""
    if not scope:
        return name
    caret = "^" if name.startswith("^") else ""
    return f"{caret}{scope.rstrip('/')}/{name[len(caret):]}"
