"""`tf.Module`: a named container of variables and other modules (TF 1.15's base of
Keras layers and of Sonnet 2 style models)."""

from __future__ import annotations

import functools
import re

from tensorflux._src.framework import graph as _graph
from tensorflux._src.train.variables import Variable

__all__ = ["Module"]

_VALID_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _snake(name):
    name = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


class Module:
    """`tf.Module(name=None)`: `variables`, `trainable_variables` and `submodules` are
    found by walking the module's attributes (sorted by name, recursing into lists,
    tuples, dicts and modules)."""

    # Modules are recognized by this flag (tf.layers layers carry it too), so this file
    # needs no import of the layers above it.
    _TF_MODULE = True

    def __init__(self, name=None):
        if name is None:
            name = _snake(type(self).__name__)
        elif not _VALID_NAME.match(name):
            raise ValueError(f"{name!r} is not a valid module name. Module names must be "
                             f"valid Python identifiers (e.g. a valid class name).")
        self._name = name
        with _graph.name_scope(name) as scope:
            self._scope_name = scope  # unique in the graph: my_module/, my_module_1/

    @property
    def name(self):
        return self._name

    @property
    def name_scope(self):
        """Re-enters this module's own name scope."""
        return _graph.name_scope(self._scope_name)

    @property
    def variables(self):
        return tuple(self._walk(lambda v: isinstance(v, Variable)))

    @property
    def trainable_variables(self):
        return tuple(self._walk(lambda v: isinstance(v, Variable) and v.trainable))

    @property
    def submodules(self):
        return tuple(self._walk(_is_module))

    def _flatten(self, recursive=True, predicate=None):
        return tuple(self._walk(predicate or (lambda v: True), recursive))

    def _walk(self, predicate, recursive=True):
        found, seen = [], set()

        def visit(value, depth):
            if isinstance(value, (list, tuple)):
                for item in value:
                    visit(item, depth)
                return
            if isinstance(value, dict):
                for key in sorted(value, key=str):
                    visit(value[key], depth)
                return
            if id(value) in seen:
                return
            seen.add(id(value))
            if predicate(value):
                found.append(value)
            if _is_module(value) and (recursive or depth == 0):
                for key in sorted(vars(value)):
                    visit(vars(value)[key], depth + 1)

        seen.add(id(self))
        for key in sorted(vars(self)):
            visit(vars(self)[key], 0)
        return found

    @classmethod
    def with_name_scope(cls, method):
        """Decorator: `method` runs under the module's name scope."""
        return in_name_scope(method)

    def __repr__(self):
        return f"<{type(self).__name__} name={self._name!r}>"


def in_name_scope(method):
    """`method` of a module (or layer), run under the object's `name_scope`."""

    @functools.wraps(method)
    def scoped(self, *args, **kwargs):
        with self.name_scope:
            return method(self, *args, **kwargs)
    return scoped


def _is_module(value):
    return getattr(type(value), "_TF_MODULE", False)
