"""`tf.flags.tf_decorator`: TF's small utility for decorators that stay introspectable.

A decorator built with `make_decorator` keeps the target's name, docstring, module and
signature, and records a `TFDecorator` under `_tf_decorator`, so `unwrap` can walk a stack
of decorators down to the function they wrap and `rewrap` can swap that function.
"""

from __future__ import annotations

import inspect
from typing import Any, Dict  # noqa: F401  (tf_decorator exports them, as TF's does)

__all__ = ["TFDecorator", "make_decorator", "rewrap", "unwrap", "fullargspec_to_signature",
           "Any", "Dict"]


def fullargspec_to_signature(fullargspec):
    """An `inspect.Signature` with the parameters an `inspect.FullArgSpec` describes."""
    P = inspect.Parameter
    defaults = fullargspec.defaults or ()
    first_default = len(fullargspec.args) - len(defaults)
    annotations = fullargspec.annotations or {}
    params = []
    for i, name in enumerate(fullargspec.args):
        default = defaults[i - first_default] if i >= first_default else P.empty
        params.append(P(name, P.POSITIONAL_OR_KEYWORD, default=default,
                        annotation=annotations.get(name, P.empty)))
    if fullargspec.varargs:
        params.append(P(fullargspec.varargs, P.VAR_POSITIONAL,
                        annotation=annotations.get(fullargspec.varargs, P.empty)))
    kwdefaults = fullargspec.kwonlydefaults or {}
    for name in fullargspec.kwonlyargs or ():
        params.append(P(name, P.KEYWORD_ONLY, default=kwdefaults.get(name, P.empty),
                        annotation=annotations.get(name, P.empty)))
    if fullargspec.varkw:
        params.append(P(fullargspec.varkw, P.VAR_KEYWORD,
                        annotation=annotations.get(fullargspec.varkw, P.empty)))
    return inspect.Signature(params, return_annotation=annotations.get("return", P.empty))


def make_decorator(target, decorator_func, decorator_name=None, decorator_doc="",
                   decorator_argspec=None):
    """Makes `decorator_func` look like `target` and records the pair for `unwrap`.

    Returns `decorator_func` itself, with `target`'s `__name__`, `__qualname__`,
    `__module__`, attributes and signature (or `decorator_argspec`'s), its docstring
    (or `decorator_doc`), `__wrapped__ = target` and a `_tf_decorator` record.
    """
    if decorator_name is None:
        decorator_name = inspect.currentframe().f_back.f_code.co_name
    record = TFDecorator(decorator_name, target, decorator_doc, decorator_argspec)
    decorator_func._tf_decorator = record
    for attr in ("__name__", "__qualname__", "__module__"):
        if hasattr(target, attr):  # callables such as functools.partial may lack them
            setattr(decorator_func, attr, getattr(target, attr))
    if hasattr(target, "__dict__"):
        for name, value in target.__dict__.items():
            decorator_func.__dict__.setdefault(name, value)
    decorator_func.__doc__ = record.__doc__
    decorator_func.__wrapped__ = target
    decorator_func.__original_wrapped__ = target
    if decorator_argspec is not None:
        decorator_func.__signature__ = fullargspec_to_signature(decorator_argspec)
    elif callable(target):
        try:
            decorator_func.__signature__ = inspect.signature(target)
        except (TypeError, ValueError):
            pass
    return decorator_func


def _has_tf_decorator_attr(obj):
    return hasattr(obj, "_tf_decorator") and isinstance(obj._tf_decorator, TFDecorator)


def rewrap(decorator_func, previous_target, new_target):
    """Replaces `previous_target` (as `unwrap` found it) by `new_target` under the
    decorators of `decorator_func`; returns the outermost callable."""
    cur = decorator_func
    innermost = None
    record = None
    while _has_tf_decorator_attr(cur):
        innermost = cur
        record = cur._tf_decorator
        if record.decorated_target is previous_target:
            break
        cur = record.decorated_target
    if innermost is None:
        # Not a decorator at all: the new target replaces it.
        if decorator_func is not previous_target:
            raise ValueError("previous_target must be what tf_decorator.unwrap returned")
        return new_target
    record.decorated_target = new_target
    # A bound method takes no attributes; its function does.
    getattr(innermost, "__func__", innermost).__wrapped__ = new_target
    return decorator_func


def unwrap(maybe_tf_decorator):
    """`(decorators, target)`: the `TFDecorator` records from the outermost in, and the
    innermost callable (`maybe_tf_decorator` itself when it is not decorated)."""
    decorators = []
    cur = maybe_tf_decorator
    while True:
        if isinstance(cur, TFDecorator):
            decorators.append(cur)
        elif _has_tf_decorator_attr(cur):
            decorators.append(cur._tf_decorator)
        else:
            break
        if not hasattr(decorators[-1], "decorated_target"):
            break
        cur = decorators[-1].decorated_target
    return decorators, cur


class TFDecorator:
    """The record of one decoration: decorator name, target, docstring and argspec."""

    def __init__(self, decorator_name, target, decorator_doc="", decorator_argspec=None):
        self._decorated_target = target
        self._decorator_name = decorator_name
        self._decorator_doc = decorator_doc
        self._decorator_argspec = decorator_argspec
        if hasattr(target, "__name__"):
            self.__name__ = target.__name__
        if hasattr(target, "__qualname__"):
            self.__qualname__ = target.__qualname__
        if decorator_doc:
            self.__doc__ = decorator_doc
        elif getattr(target, "__doc__", None):
            self.__doc__ = target.__doc__
        else:
            self.__doc__ = ""

    def __get__(self, instance, owner):
        return self._decorated_target.__get__(instance, owner)

    def __call__(self, *args, **kwargs):
        return self._decorated_target(*args, **kwargs)

    @property
    def decorated_target(self):
        return self._decorated_target

    @decorated_target.setter
    def decorated_target(self, decorated_target):
        self._decorated_target = decorated_target

    @property
    def decorator_name(self):
        return self._decorator_name

    @property
    def decorator_doc(self):
        return self._decorator_doc

    @property
    def decorator_argspec(self):
        return self._decorator_argspec
