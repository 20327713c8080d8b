"""`tf.make_template`: a function whose variables (made by `tf.get_variable`) are created
on its first call and shared by every later call.

The first call opens the variable scope `name_` (made unique: `name_`, `name__1`, ...
unless `unique_name_` is given, which is used as is) and later calls re-enter it with
reuse=True. `create_scope_now_=True` picks the scope when the template is made instead.
A later call that creates a trainable variable is TF1's ValueError (tf.Variable where
tf.get_variable was meant).
"""

from __future__ import annotations

import functools
import logging
import traceback

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.train import variable_scope as vs

__all__ = ["make_template"]

_log = logging.getLogger("tensorflux")


def make_template(name_, func_, create_scope_now_=False, unique_name_=None,
                  custom_getter_=None, **kwargs):
    """Wraps `func_` (with `kwargs` bound) so that all its calls share variables."""
    if kwargs:
        func_ = functools.wraps(func_)(functools.partial(func_, **kwargs))
    return Template(name_, func_, create_scope_now=create_scope_now_,
                    unique_name=unique_name_, custom_getter=custom_getter_)


class Template:
    """What make_template returns: call it like the function it wraps."""

    def __init__(self, name, func, create_scope_now=False, unique_name=None,
                 custom_getter=None, create_graph_function=False):
        if name is None:
            raise ValueError("name cannot be None.")
        self._func = func
        self._stacktrace = traceback.format_stack()[:-2]
        self._name = name
        self._unique_name = unique_name
        self._custom_getter = custom_getter
        self._variable_scope = None
        if create_scope_now:
            with vs.variable_scope(unique_name, default_name=None if unique_name else name,
                                   custom_getter=custom_getter,
                                   auxiliary_name_scope=False) as scope:
                self._variable_scope = scope
            # Each call then opens a fresh name scope named after the variable scope.
            scope._name_scope = scope.name.split("/")[-1]
        self._variables_created = False
        self._first_call = True

    def _call_func(self, args, kwargs):
        try:
            if self._variables_created:
                graph = _graph.get_default_graph()
                vars_at_start = len(graph.get_collection(GraphKeys.GLOBAL_VARIABLES))
                trainable_at_start = len(graph.get_collection(GraphKeys.TRAINABLE_VARIABLES))
                result = self._func(*args, **kwargs)
                trainable = graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
                if trainable_at_start != len(trainable):
                    raise ValueError(f"Trainable variable created when calling a template "
                                     f"after the first time, perhaps you used tf.Variable "
                                     f"when you meant tf.get_variable: "
                                     f"{trainable[trainable_at_start:]}")
                variables = graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
                if vars_at_start != len(variables):
                    _log.info("New variables created when calling a template after the first "
                              "time, perhaps you used tf.Variable when you meant "
                              "tf.get_variable: %s", variables[vars_at_start:])
                return result
            self._first_call = False
            try:
                result = self._func(*args, **kwargs)
            except BaseException:
                self._first_call = True
                raise
            self._variables_created = True
            return result
        except Exception as exc:
            # As TF1: the error also says where the template was defined.
            arg0 = exc.args[0] if exc.args else ""
            trace = "".join(self._stacktrace)
            exc.args = (f"{arg0}\n\noriginally defined at:\n{trace}",) + tuple(exc.args[1:])
            raise

    def __call__(self, *args, **kwargs):
        if self._variable_scope is not None:
            # Variables are reused once a call has created them.
            with vs.variable_scope(self._variable_scope, reuse=not self._first_call):
                return self._call_func(args, kwargs)
        with vs.variable_scope(self._unique_name, self._name,
                               custom_getter=self._custom_getter) as scope:
            self._variable_scope = scope
            return self._call_func(args, kwargs)

    @property
    def name(self):
        return self._name

    @property
    def func(self):
        return self._func

    @property
    def variable_scope(self):
        return self._variable_scope

    @property
    def variable_scope_name(self):
        """The scope's name with a trailing "/" (so "a" does not match "ab/...")."""
        if self._variable_scope is None:
            return None
        name = self._variable_scope.name
        return name if not name or name.endswith("/") else name + "/"

    def _collection(self, key):
        if not self._variables_created:
            return []
        return _graph.get_collection(key, self.variable_scope_name)

    @property
    def variables(self):
        return self.global_variables

    @property
    def trainable_variables(self):
        return self._collection(GraphKeys.TRAINABLE_VARIABLES)

    @property
    def non_trainable_variables(self):
        trainable = set(self.trainable_variables)
        return [v for v in self.global_variables if v not in trainable]

    @property
    def global_variables(self):
        return self._collection(GraphKeys.GLOBAL_VARIABLES)

    @property
    def local_variables(self):
        return self._collection(GraphKeys.LOCAL_VARIABLES)

    weights = variables
    trainable_weights = trainable_variables
    non_trainable_weights = non_trainable_variables

    @property
    def var_scope(self):
        """Deprecated TF1 name of variable_scope."""
        return self._variable_scope
