"""Type-based dispatch of public ops (TF's util/dispatch.py, for composite arguments).

An op wrapper made with `add_dispatch_support` runs unchanged unless one of its
arguments (or an item of a list/tuple argument) is an instance of a type registered with
`register_dispatch_type`; then the handler registered for that wrapper with `dispatch_for`
runs instead. A handler returns `NOT_SUPPORTED` to fall back to the op itself.

This module sits below the op families: they decorate their wrappers, and the family
that defines a composite type (e.g. ops/sparse/ragged_dispatch.py for RaggedTensor)
registers the type and the handlers. The check is a few isinstance tests per call.
"""

from __future__ import annotations

import functools

__all__ = ["NOT_SUPPORTED", "add_dispatch_support", "add_dispatch_support_to", "dispatch_for",
           "register_dispatch_type"]

NOT_SUPPORTED = object()

_types: tuple = ()
_handlers: dict = {}


def register_dispatch_type(cls):
    """Arguments of type `cls` make decorated ops look for a handler."""
    global _types
    if cls not in _types:
        _types = _types + (cls,)


def _holds_dispatch_type(values):
    for v in values:
        if isinstance(v, _types):
            return True
        if isinstance(v, (list, tuple)) and any(isinstance(x, _types) for x in v):
            return True
    return False


def add_dispatch_support(fn):
    """`fn` with dispatch to registered handlers on composite arguments."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _types and (_holds_dispatch_type(args) or _holds_dispatch_type(kwargs.values())):
            for handler in _handlers.get(wrapper, ()):
                result = handler(*args, **kwargs)
                if result is not NOT_SUPPORTED:
                    return result
        return fn(*args, **kwargs)

    wrapper._tf_dispatch_target = fn
    return wrapper


def dispatch_for(*apis):
    """Registers the decorated function as a handler of each of `apis` (wrappers made by
    `add_dispatch_support`); it is called with the API's own arguments."""
    for api in apis:
        if not hasattr(api, "_tf_dispatch_target"):
            raise AssertionError(f"{getattr(api, '__name__', api)} has no dispatch support")

    def decorator(handler):
        for api in apis:
            _handlers.setdefault(api, []).append(handler)
        return handler
    return decorator


def add_dispatch_support_to(namespace, names):
    """Replaces each function `names` in a module's `namespace` (its globals()) by its
    dispatching wrapper; aliases bound to the same function get the same wrapper."""
    done = {}
    for name in names:
        fn = namespace[name]
        if id(fn) not in done:
            done[id(fn)] = fn if hasattr(fn, "_tf_dispatch_target") else add_dispatch_support(fn)
        namespace[name] = done[id(fn)]
    originals = {id(w._tf_dispatch_target): w for w in done.values()}
    for key, value in list(namespace.items()):
        if callable(value) and id(value) in originals:
            namespace[key] = originals[id(value)]
