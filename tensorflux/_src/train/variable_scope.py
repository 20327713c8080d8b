"""`tf.get_variable` and `tf.variable_scope`: named, shareable variables (TF1 rules).

Variable names depend only on variable scopes (`foo/v:0`); op names still follow name
scopes, which `variable_scope` also opens (re-entering "foo" gives name scope
`foo_1` while variables stay `foo/...`). Sharing is controlled by `reuse`: False
creates (and fails if the name exists), True reuses (and fails if it does not),
AUTO_REUSE does whichever applies. Reuse is inherited by nested scopes.
"""

from __future__ import annotations

import contextlib
import enum

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.ops.state import init_ops
from tensorflux._src.train.variables import Variable

__all__ = ["get_variable", "variable_scope", "get_variable_scope", "VariableScope",
           "AUTO_REUSE", "get_local_variable", "no_regularizer", "variable_op_scope"]


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE


def no_regularizer(_):
    """Use this to disable a scope's regularizer for one variable."""
    return None


class VariableScope:
    """A variable scope's name and the defaults it gives `get_variable`."""

    def __init__(self, reuse, name="", initializer=None, regularizer=None,
                 caching_device=None, partitioner=None, custom_getter=None,
                 name_scope="", dtype=_dtypes.float32, use_resource=None, constraint=None):
        self._name = name
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = _dtypes.as_dtype(dtype)
        self._use_resource = use_resource
        self._constraint = constraint

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    regularizer = property(lambda self: self._regularizer)
    dtype = property(lambda self: self._dtype)
    caching_device = property(lambda self: self._caching_device)
    partitioner = property(lambda self: self._partitioner)
    custom_getter = property(lambda self: self._custom_getter)
    use_resource = property(lambda self: self._use_resource)
    constraint = property(lambda self: self._constraint)

    def reuse_variables(self):
        self._reuse = True

    def set_initializer(self, initializer):
        self._initializer = initializer

    def set_regularizer(self, regularizer):
        self._regularizer = regularizer

    def set_dtype(self, dtype):
        self._dtype = _dtypes.as_dtype(dtype)

    def get_variable(self, name, shape=None, dtype=None, initializer=None, regularizer=None,
                     reuse=None, trainable=None, collections=None, validate_shape=True,
                     constraint=None, custom_getter=None, **unused):
        full_name = f"{self._name}/{name}" if self._name else name
        reuse = self._reuse if reuse is None else (reuse or self._reuse)
        options = dict(
            shape=shape, dtype=dtype or self._dtype,
            initializer=initializer if initializer is not None else self._initializer,
            regularizer=regularizer if regularizer is not None else self._regularizer,
            reuse=reuse, trainable=True if trainable is None else trainable,
            collections=collections, validate_shape=validate_shape,
            constraint=constraint if constraint is not None else self._constraint)
        custom_getter = custom_getter if custom_getter is not None else self._custom_getter
        with _graph.name_scope(None):  # variable names ignore the current name scope
            if custom_getter is None:
                return _true_getter(full_name, **options)
            # As TF1: the getter gets the real one and the full name, and may return
            # anything (a cast of the variable, for mixed precision).
            return custom_getter(getter=_true_getter, name=full_name, **options)


class _VariableStore:
    """Per-graph: variables made by get_variable, and how often each scope was opened."""

    def __init__(self):
        self.variables = {}
        self.scope_counts = {}
        self.current_scope = VariableScope(False)

    def get(self, name, shape, dtype, initializer, regularizer, reuse, trainable, collections,
            validate_shape, constraint):
        dtype = _dtypes.as_dtype(dtype)
        shape = tensor_shape.as_shape(shape) if shape is not None else None
        if name in self.variables:
            if reuse is False or reuse is None:
                raise ValueError(f"Variable {name} already exists, disallowed. Did you mean to "
                                 f"set reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
            var = self.variables[name]
            if shape is not None and not shape.is_compatible_with(var.shape):
                raise ValueError(f"Trying to share variable {name}, but specified shape {shape} "
                                 f"and found shape {var.shape}.")
            if dtype != var.dtype.base_dtype:
                raise ValueError(f"Trying to share variable {name}, but specified dtype "
                                 f"{dtype.name} and found dtype {var.dtype.base_dtype.name}.")
            return var
        if reuse is True:
            raise ValueError(f"Variable {name} does not exist, or was not created with "
                             f"tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                             f"VarScope?")
        var = self._create(name, shape, dtype, initializer, trainable, collections,
                           validate_shape, constraint)
        self.variables[name] = var
        if regularizer is not None:
            with _graph.name_scope(f"{name}/Regularizer/"):
                loss = regularizer(var)
            if loss is not None:
                _graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return var

    @staticmethod
    def _create(name, shape, dtype, initializer, trainable, collections, validate_shape,
                constraint):
        if isinstance(initializer, Tensor) or not callable(initializer) and initializer is not None:
            if shape is not None and isinstance(initializer, Tensor) \
                    and not shape.is_compatible_with(initializer.shape):
                raise ValueError(f"The initializer passed is not valid. It should be a callable "
                                 f"with no arguments and the shape should not be provided or "
                                 f"an instance of `tf.keras.initializers.*' and `shape` should "
                                 f"be fully defined. (variable {name})")
            init_value, dtype_arg = initializer, None if isinstance(initializer, Tensor) else dtype
        else:
            if shape is None or not shape.is_fully_defined():
                raise ValueError(f"Shape of a new variable ({name}) must be fully defined, but "
                                 f"instead was {shape}.")
            if initializer is None:
                if dtype.is_floating:
                    initializer = init_ops.glorot_uniform_initializer()
                elif dtype.is_integer or dtype.is_unsigned or dtype.is_bool:
                    initializer = init_ops.zeros_initializer()
                else:
                    raise ValueError(f"An initializer for variable {name} of "
                                     f"{dtype.base_dtype!r} is required")
            if isinstance(initializer, type):
                initializer = initializer(dtype=dtype)
            init_fn = initializer

            def init_value():
                return init_fn(shape.as_list(), dtype=dtype)

            dtype_arg = dtype
        collections = list(collections) if collections is not None else None
        return Variable(init_value, name=name, trainable=trainable, collections=collections,
                        validate_shape=validate_shape, dtype=dtype_arg, constraint=constraint)


def _true_getter(name, shape=None, dtype=_dtypes.float32, initializer=None, regularizer=None,
                 reuse=None, trainable=True, collections=None, validate_shape=True,
                 constraint=None, **unused):
    """What a custom getter calls to get or create the variable itself."""
    return _store().get(name, shape=shape, dtype=dtype, initializer=initializer,
                        regularizer=regularizer, reuse=reuse, trainable=trainable,
                        collections=collections, validate_shape=validate_shape,
                        constraint=constraint)


def _store() -> _VariableStore:
    graph = _graph.get_default_graph()
    store = getattr(graph, "_variable_store", None)
    if store is None:
        store = graph._variable_store = _VariableStore()
    return store


def get_variable_scope() -> VariableScope:
    return _store().current_scope


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                 synchronization=None, aggregation=None):
    """Gets an existing variable named `scope/name`, or creates it (see module doc)."""
    return get_variable_scope().get_variable(
        name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
        trainable=trainable, collections=collections, validate_shape=validate_shape,
        constraint=constraint, custom_getter=custom_getter)


def get_local_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                       trainable=False, collections=None, validate_shape=True, **kwargs):
    collections = list(collections or []) + [GraphKeys.LOCAL_VARIABLES]
    return get_variable(name, shape, dtype, initializer, regularizer, trainable=False,
                        collections=collections, validate_shape=validate_shape)


@contextlib.contextmanager
def variable_scope(name_or_scope, default_name=None, values=None, initializer=None,
                   regularizer=None, caching_device=None, partitioner=None,
                   custom_getter=None, reuse=None, dtype=None, use_resource=None,
                   constraint=None, auxiliary_name_scope=True):
    """Opens a variable scope (and a matching name scope); yields the VariableScope."""
    if name_or_scope is None and default_name is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    if reuse is False:
        reuse = None  # False never overrides an enclosing reuse, as in TF1
    graph = _graph.graph_from_inputs(values or [])
    with graph.as_default():
        store = _store()
        parent = store.current_scope
        if isinstance(name_or_scope, VariableScope):
            scope_name = name_or_scope.name
            name_scope_arg = name_or_scope.original_name_scope or None
            base = name_or_scope
        else:
            if name_or_scope is not None:
                short = name_or_scope
            else:  # default_name: unique among variable scopes opened under the parent
                short = _unique_scope_name(store, parent.name, default_name)
            scope_name = f"{parent.name}/{short}" if parent.name else short
            name_scope_arg = short
            base = parent
        store.scope_counts[scope_name] = store.scope_counts.get(scope_name, 0) + 1
        saved_counts = dict(store.scope_counts)
        # Reuse is inherited: a scope reuses if asked to or if its parent (or the scope
        # object being re-entered) does.
        if isinstance(name_or_scope, VariableScope):
            new_reuse = reuse or name_or_scope.reuse
        else:
            new_reuse = reuse or parent.reuse
        with contextlib.ExitStack() as stack:
            if auxiliary_name_scope:
                name_scope = stack.enter_context(graph.name_scope(name_scope_arg))
            else:
                name_scope = (graph.get_name_scope() + "/") if graph.get_name_scope() else ""
            scope = VariableScope(
                new_reuse, name=scope_name,
                initializer=initializer if initializer is not None else base.initializer,
                regularizer=regularizer if regularizer is not None else base.regularizer,
                caching_device=caching_device or base.caching_device,
                partitioner=partitioner or base.partitioner,
                custom_getter=_compose_getters(custom_getter, base.custom_getter),
                name_scope=name_scope if not isinstance(name_or_scope, VariableScope)
                else name_or_scope.original_name_scope,
                dtype=dtype if dtype is not None else base.dtype,
                use_resource=use_resource, constraint=constraint or base.constraint)
            store.current_scope = scope
            try:
                yield scope
            finally:
                store.current_scope = parent
                # As TF1: leaving a scope forgets which sub-scopes it opened, so entering
                # it again (e.g. with reuse=True) names its layers dense, not dense_1.
                if isinstance(name_or_scope, VariableScope):
                    store.scope_counts = saved_counts
                else:
                    for key in store.scope_counts:
                        if key.startswith(scope_name + "/"):
                            store.scope_counts[key] = 0


def _unique_scope_name(store, parent_name, default_name):
    prefix = f"{parent_name}/" if parent_name else ""
    name, i = default_name, 0
    while store.scope_counts.get(prefix + name, 0) > 0:
        i += 1
        name = f"{default_name}_{i}"
    return name


def _compose_getters(inner, outer):
    """A nested scope's custom getter runs first and calls its parent's (as TF1)."""
    if inner is None or outer is None:
        return inner or outer
    return lambda getter, *args, **kwargs: inner(
        lambda *a, **kw: outer(getter, *a, **kw), *args, **kwargs)


def variable_op_scope(values, name_or_scope, default_name=None, initializer=None,
                      regularizer=None, caching_device=None, partitioner=None,
                      custom_getter=None, reuse=None, dtype=None, use_resource=None,
                      constraint=None):
    """TF1's deprecated spelling of `variable_scope(name_or_scope, default_name, values,
    ...)`."""
    return variable_scope(name_or_scope, default_name=default_name, values=values,
                          initializer=initializer, regularizer=regularizer,
                          caching_device=caching_device, partitioner=partitioner,
                          custom_getter=custom_getter, reuse=reuse, dtype=dtype,
                          use_resource=use_resource, constraint=constraint)
