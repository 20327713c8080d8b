"""`tf.Variable` (TF1 ref variables) and the initializer/collection helpers around it.

`tf.Variable([1.0], name="v")` builds TF1's structure: `v/initial_value` (Const),
`v` (VariableV2, dtype float32_ref), `v/Assign` (the initializer) and `v/read` (the
snapshot other ops read). The value itself lives in the Session.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.tensor_conversion import (
    convert_to_tensor, register_tensor_conversion_function,
)
from tensorflux._src.ops import array_ops, control_ops, state_ops
from tensorflux._src.ops.bodies import outside_bodies

__all__ = [
    "Variable", "VariableV1", "global_variables", "all_variables", "trainable_variables",
    "local_variables", "model_variables", "moving_average_variables",
    "global_variables_initializer", "initialize_all_variables",
    "local_variables_initializer", "initialize_local_variables", "variables_initializer",
    "initialize_variables", "is_variable_initialized",
    "report_uninitialized_variables",
]


class Variable:
    """A mutable tensor whose value persists across `Session.run` calls."""

    def __init__(self, initial_value=None, trainable=True, collections=None,
                 validate_shape=True, caching_device=None, name=None, variable_def=None,
                 dtype=None, expected_shape=None, import_scope=None, constraint=None,
                 use_resource=None, synchronization=None, aggregation=None, shape=None):
        if variable_def is not None:
            raise NotImplementedError("Variable(variable_def=...) is not supported; build the "
                                      "variable from an initial_value instead.")
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if constraint is not None and not callable(constraint):
            raise ValueError("The `constraint` argument must be a callable.")
        collections = [GraphKeys.GLOBAL_VARIABLES] if collections is None else list(collections)
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        self._trainable = trainable
        self._constraint = constraint
        self._caching_device = caching_device
        init_from_fn = callable(initial_value)
        # As TF1's init_scope: a variable is created outside any control-dependency
        # context, so `with tf.control_dependencies(update_ops): opt.minimize(...)` does
        # not make its initializer (the global step's, a slot's) wait for those updates.
        # It also leaves control-flow bodies: a cell's weights made inside a loop body.
        with outside_bodies(_graph.get_default_graph()), _graph.control_dependencies(
                None), _graph.name_scope(
                name, "Variable", [] if init_from_fn else [initial_value]) as scope:
            if init_from_fn:
                # As TF: the initializer's ops get no device (they run where the variable does).
                with _graph.name_scope("Initializer"), _graph.device(None):
                    initial_value = initial_value()
            self._initial_value = convert_to_tensor(initial_value, name="initial_value",
                                                    dtype=dtype)
            value_shape = self._initial_value.shape
            if validate_shape and not value_shape.is_fully_defined():
                raise ValueError(f"initial_value must have a shape specified: "
                                 f"{self._initial_value}")
            var_shape = value_shape if validate_shape else tensor_shape.unknown_shape()
            if shape is not None:
                var_shape = tensor_shape.as_shape(shape)
            self._variable = state_ops.variable_op(var_shape, self._initial_value.dtype,
                                                   name=scope)
            self._initializer_op = state_ops.assign(
                self._variable, self._initial_value, validate_shape=validate_shape,
                name="Assign").op
            # TF colocates the snapshot with the variable (a ps task under
            # replica_device_setter), or puts it on caching_device.
            with _graph.device(None), _graph.device(caching_device or self._variable.device):
                self._snapshot = array_ops.identity(self._variable, name="read")
        _graph.get_default_graph().add_to_collections(collections, self)

    @classmethod
    def _from_graph_elements(cls, variable, initializer, snapshot, initial_value,
                             trainable=True):
        """A Variable over ops already in a graph (an imported graph's, as TF's
        `Variable(variable_def=...)`); it adds no ops and joins no collections."""
        self = cls.__new__(cls)
        self._trainable = trainable
        self._constraint = None
        self._caching_device = None
        self._initial_value = initial_value
        self._variable = variable
        self._initializer_op = initializer
        self._snapshot = snapshot
        return self

    # -- identity -----------------------------------------------------------------------
    @property
    def name(self):
        return self._variable.name

    @property
    def op(self):
        return self._variable.op

    @property
    def graph(self):
        return self._variable.graph

    @property
    def device(self):
        return self._variable.device

    @property
    def dtype(self):
        return self._variable.dtype

    @property
    def shape(self):
        return self._variable.shape

    def get_shape(self):
        return self._variable.shape

    @property
    def trainable(self):
        return self._trainable

    @property
    def constraint(self):
        return self._constraint

    @property
    def initializer(self):
        return self._initializer_op

    @property
    def initial_value(self):
        return self._initial_value

    def _ref(self):
        return self._variable

    def _as_graph_element(self):
        return self._variable

    # -- reading --------------------------------------------------------------------------
    def value(self):
        """The `v/read` snapshot: the value ops normally read."""
        return self._snapshot

    def read_value(self):
        """A new read of the variable (a fresh identity op)."""
        with _graph.name_scope("Read"):
            return array_ops.identity(self._variable, name="read")

    def initialized_value(self):
        """The variable's value once initialized: its current value if it is initialized
        when this runs, else its initial value (TF1's cond), so another variable can be
        initialized from it in the same run as this one: `tf.Variable(w.initialized_value()
        * 2)` with `tf.global_variables_initializer()`."""
        from tensorflux._src.ops.control_flow_ops import cond
        graph = _graph.get_default_graph()
        with outside_bodies(graph), _graph.control_dependencies(None):  # TF1's init_scope
            return cond(state_ops.is_variable_initialized(self._variable), self.read_value,
                        lambda: self._initial_value)

    def eval(self, session=None):
        return self._snapshot.eval(session=session)

    # -- writing ----------------------------------------------------------------------------
    def assign(self, value, use_locking=False, name=None, read_value=True):
        op = state_ops.assign(self._variable, value, use_locking=use_locking, name=name)
        return op if read_value else op.op

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        op = state_ops.assign_add(self._variable, delta, use_locking=use_locking, name=name)
        return op if read_value else op.op

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        op = state_ops.assign_sub(self._variable, delta, use_locking=use_locking, name=name)
        return op if read_value else op.op

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        return state_ops.scatter_update(self._variable, sparse_delta.indices,
                                        sparse_delta.values, use_locking, name)

    def load(self, value, session=None):
        """Assigns `value` by running the initializer with its initial value fed."""
        from tensorflux._src.runtime.default_session import get_default_session
        session = session or get_default_session()
        if session is None:
            raise ValueError("Either session argument should be provided or default session "
                             "should be established")
        session.run(self._initializer_op, {self._initializer_op.inputs[1]: value})

    def __repr__(self):
        return (f"<tf.Variable '{self.name}' shape={self.shape} "
                f"dtype={self.dtype.name}>")

    __hash__ = object.__hash__

    def __bool__(self):
        return self._snapshot.__bool__()

    def __iter__(self):
        raise TypeError("'Variable' object is not iterable.")


VariableV1 = Variable


def _convert_variable(var, dtype=None, name=None, as_ref=False):
    tensor = var._ref() if as_ref else var.value()
    if dtype is not None and not tensor.dtype.base_dtype.is_compatible_with(dtype):
        raise ValueError(f"Incompatible type conversion requested to type '{dtype.name}' for "
                         f"variable of type '{var.dtype.name}'")
    return tensor


register_tensor_conversion_function(Variable, _convert_variable)


def _delegate(dunder):
    def method(self, *args):
        return getattr(self.value(), dunder)(*args)
    method.__name__ = dunder
    return method


for _dunder in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
                "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
                "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__and__",
                "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__lt__", "__le__",
                "__gt__", "__ge__", "__neg__", "__abs__", "__invert__", "__getitem__"):
    setattr(Variable, _dunder, _delegate(_dunder))


# -- collections --------------------------------------------------------------------------
def global_variables(scope=None):
    return _graph.get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


all_variables = global_variables


def trainable_variables(scope=None):
    return _graph.get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope=None):
    return _graph.get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def model_variables(scope=None):
    return _graph.get_collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope=None):
    return _graph.get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


# -- initializers ---------------------------------------------------------------------------
def variables_initializer(var_list, name="init"):
    """An op running the initializers of `var_list` (a no-op for an empty list)."""
    if var_list:
        return control_ops.group(*[v.initializer for v in var_list], name=name)
    return control_ops.no_op(name=name)


initialize_variables = variables_initializer


def global_variables_initializer():
    return variables_initializer(global_variables())


initialize_all_variables = global_variables_initializer


def local_variables_initializer():
    return variables_initializer(local_variables())


initialize_local_variables = local_variables_initializer


def is_variable_initialized(variable):
    return state_ops.is_variable_initialized(variable)


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor: names of the variables in var_list (default: all global and
    local variables) that have no value in the session yet."""
    from tensorflux._src.ops import host_ops  # noqa: F401  (registers the op)
    from tensorflux._src.ops.op_builder import apply_op
    if var_list is None:
        var_list = global_variables() + local_variables()
    with _graph.name_scope(name) as scope:
        if not var_list:
            from tensorflux._src.ops.constant import constant
            return constant(np.array([], dtype=object), dtype="string", name=scope)
        flags = array_ops.stack([state_ops.is_variable_initialized(v) for v in var_list])
        return apply_op("ReportUninitializedVariables", name=scope, is_initialized=flags,
                        names=tuple(v.op.name for v in var_list))
