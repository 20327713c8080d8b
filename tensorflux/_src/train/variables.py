"""`tf.Variable` (TF1 ref variables) and the initializer/collection helpers around it.

`tf.Variable([1.0], name="v")` builds TF1's structure: `v/initial_value` (Const),
`v` (VariableV2, dtype float32_ref), `v/Assign` (the initializer) and `v/read` (the
snapshot other ops read). The value itself lives in the Session.
"""

from __future__ import annotations

import contextlib
import enum
import threading
import weakref

import numpy as np

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import protos
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.operation import Reference
from tensorflux._src.framework.scoped_names import prepend_scope, strip_scope
from tensorflux._src.framework.tensor_conversion import (
    convert_to_tensor, register_tensor_conversion_function,
)
from tensorflux._src.ops.array import array_ops, slicing_ops
from tensorflux._src.ops.state import state_ops
from tensorflux._src.ops.control import control_ops
from tensorflux._src.ops.control.bodies import outside_bodies

__all__ = [
    "Variable", "VariableV1", "PartitionedVariable", "VariableAggregation",
    "VariableSynchronization",
    "variable_creator_scope", "global_variables", "all_variables", "trainable_variables",
    "local_variables", "model_variables", "moving_average_variables",
    "global_variables_initializer", "initialize_all_variables",
    "local_variables_initializer", "initialize_local_variables", "variables_initializer",
    "initialize_variables", "is_variable_initialized", "assert_variables_initialized",
    "report_uninitialized_variables",
]


class VariableSynchronization(enum.Enum):
    """When a distributed variable's copies are brought in sync (TF's enum values)."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """How updates of a variable's copies are combined (TF1's enum, with its alias)."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3  # TF1's earlier name of ONLY_FIRST_REPLICA


_creators = threading.local()  # per thread: the variable_creator_scope stack


@contextlib.contextmanager
def variable_creator_scope(variable_creator):
    """Inside the block, `tf.Variable(...)` calls `variable_creator(next_creator,
    **kwargs)`; `next_creator(**kwargs)` is the next creator out (innermost first),
    and the last one builds the Variable."""
    stack = _creators.__dict__.setdefault("stack", [])
    stack.append(variable_creator)
    try:
        yield
    finally:
        stack.pop()


class _CreatedThroughCreators(type):
    """Routes `Variable(...)` through the active variable_creator_scope functions."""

    def __call__(cls, *args, **kwargs):
        stack = getattr(_creators, "stack", None)
        if not stack:
            return super().__call__(*args, **kwargs)
        names = ("initial_value", "trainable", "collections", "validate_shape",
                 "caching_device", "name", "variable_def", "dtype", "expected_shape",
                 "import_scope", "constraint", "use_resource", "synchronization",
                 "aggregation", "shape")
        kwargs.update(zip(names, args))
        build = lambda **kw: type.__call__(cls, **kw)  # noqa: E731 - the innermost creator
        for creator in stack:
            build = (lambda c, nxt: lambda **kw: c(nxt, **kw))(creator, build)
        return build(**kwargs)


class Variable(metaclass=_CreatedThroughCreators):
    """A mutable tensor whose value persists across `Session.run` calls."""

    _eager = False  # made while eager execution was on (see __init__)

    class SaveSliceInfo:
        """Where a variable sits in a larger, partitioned one (how Saver names its
        slices: `spec` is TF's "<full shape> <offset>,<size>:..." string)."""

        def __init__(self, full_name=None, full_shape=None, var_offset=None, var_shape=None,
                     save_slice_info_def=None, import_scope=None):
            if save_slice_info_def is not None:
                full_name = save_slice_info_def.full_name
                full_shape = list(save_slice_info_def.full_shape)
                var_offset = list(save_slice_info_def.var_offset)
                var_shape = list(save_slice_info_def.var_shape)
            self.full_name = full_name
            self.full_shape = full_shape
            self.var_offset = var_offset
            self.var_shape = var_shape

        @property
        def spec(self):
            full = " ".join(str(d) for d in self.full_shape) + " "
            return full + ":".join(f"{o},{n}" for o, n in zip(self.var_offset,
                                                                 self.var_shape))

        @classmethod
        def from_spec(cls, spec):
            """Parses a `spec` string (TF 2.x): "<full shape> <slice>", the slice one
            `<offset>,<size>` or `-` (the whole dimension) per dimension, ":"-separated."""
            parts = spec.strip().split(" ")
            if parts == [""]:  # a scalar: no full-shape dims and no slice
                return cls(full_shape=[], var_offset=[], var_shape=[])
            try:
                full_shape = [int(d) for d in parts[:-1]]
                offset, shape = [], []
                for dim, extent in zip(full_shape, parts[-1].split(":"), strict=True):
                    if extent == "-":
                        offset.append(0)
                        shape.append(dim)
                    else:
                        start, length = (int(x) for x in extent.split(","))
                        offset.append(start)
                        shape.append(length)
            except ValueError:
                raise ValueError(f"Invalid slice spec {spec!r}: expected '<full shape> "
                                 f"<offset>,<size>:...' with one slice per dimension") from None
            return cls(full_shape=full_shape, var_offset=offset, var_shape=shape)

    def __init__(self, initial_value=None, trainable=True, collections=None,
                 validate_shape=True, caching_device=None, name=None, variable_def=None,
                 dtype=None, expected_shape=None, import_scope=None, constraint=None,
                 use_resource=None, synchronization=None, aggregation=None, shape=None):
        if variable_def is not None:
            if initial_value is not None:
                raise ValueError("variable_def and initial_value are mutually exclusive.")
            self._init_from_proto(variable_def, import_scope)
            return
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        graph = _graph.get_default_graph()
        if getattr(graph, "lift_variables", False):
            # Traced by tf.function/defun (eager/function.py): made eagerly, outside the
            # trace, as TF's init_scope does; the trace captures it.
            with graph.outer_graph.as_default():
                self.__init__(initial_value, trainable, collections, validate_shape,
                              caching_device, name, None, dtype, expected_shape,
                              import_scope, constraint, use_resource, synchronization,
                              aggregation, shape)
            return
        if constraint is not None and not callable(constraint):
            raise ValueError("The `constraint` argument must be a callable.")
        collections = [GraphKeys.GLOBAL_VARIABLES] if collections is None else list(collections)
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        self._trainable = trainable
        self._constraint = constraint
        self._caching_device = caching_device
        self._synchronization = _enum_arg(VariableSynchronization, synchronization,
                                          "synchronization")
        self._aggregation = _enum_arg(VariableAggregation, aggregation, "aggregation")
        self._save_slice_info = None
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
        # Eager execution (eager/eager_graph.py): the ops above already ran; the ref
        # tensor holds the buffer, and every read is a fresh op (a tape can watch it).
        self._eager = self._variable._is_eager
        if self._eager:
            self._variable._variable_object = weakref.ref(self)

    # -- VariableDef (MetaGraphs and SavedModels: train/meta_graph.py) ---------------------
    def to_proto(self, export_scope=None):
        """This variable's VariableDef (TF's variable.proto), names relative to
        `export_scope`; None when the variable is not under it."""
        def strip(name):
            return strip_scope(name, export_scope)

        if strip(self._variable.name) is None:
            return None
        proto = protos.VariableDef(
            variable_name=strip(self._variable.name),
            initializer_name=strip(self._initializer_op.name) or "",
            snapshot_name=strip(self._snapshot.name) or "",
            trainable=bool(self._trainable), is_resource=False,
            synchronization=int(self._synchronization.value),
            aggregation=int(self._aggregation.value))
        if self._initial_value is not None:
            proto.initial_value_name = strip(self._initial_value.name) or ""
        info = self._save_slice_info
        if info is not None:
            proto.save_slice_info_def.CopyFrom(protos.SaveSliceInfoDef(
                full_name=strip(info.full_name) or info.full_name,
                full_shape=info.full_shape, var_offset=info.var_offset,
                var_shape=info.var_shape))
        return proto

    @staticmethod
    def from_proto(variable_def, import_scope=None, graph=None):
        """A Variable over the ops a VariableDef names in `graph` (the default graph),
        their names prefixed by `import_scope`; it adds no ops."""
        var = Variable.__new__(Variable)
        var._init_from_proto(variable_def, import_scope, graph)
        return var

    def _init_from_proto(self, variable_def, import_scope=None, graph=None):
        graph = graph or _graph.get_default_graph()

        def element(name):
            if not name:
                return None
            scoped = prepend_scope(name, import_scope)
            try:
                return graph.as_graph_element(scoped)
            except (KeyError, ValueError):
                raise ValueError(f"VariableDef of {variable_def.variable_name} names "
                                 f"{scoped!r}, which is not in the graph; import the "
                                 f"MetaGraph's GraphDef first") from None

        variable = element(variable_def.variable_name)
        if variable.op.type != "VariableV2":
            raise ValueError(f"VariableDef {variable_def.variable_name} names a "
                             f"{variable.op.type} op, not a variable")
        self._variable = variable
        self._initializer_op = element(variable_def.initializer_name)
        snapshot = element(variable_def.snapshot_name)
        self._snapshot = variable if snapshot is None else snapshot
        self._initial_value = element(variable_def.initial_value_name)
        self._trainable = bool(variable_def.trainable)
        self._constraint = None
        self._caching_device = None
        self._synchronization = VariableSynchronization(variable_def.synchronization)
        self._aggregation = VariableAggregation(variable_def.aggregation)
        self._save_slice_info = None
        if variable_def.HasField("save_slice_info_def"):
            info = variable_def.save_slice_info_def
            self._save_slice_info = Variable.SaveSliceInfo(
                full_name=prepend_scope(info.full_name, import_scope), full_shape=list(info.full_shape),
                var_offset=list(info.var_offset), var_shape=list(info.var_shape))

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
        # Eager variables are TF's resource variables to the user: float32, not float32_ref.
        if getattr(self._variable.graph, "_is_eager_graph", False):
            return self._variable.dtype.base_dtype
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
    def synchronization(self):
        return self._synchronization

    @property
    def aggregation(self):
        return self._aggregation

    def set_shape(self, shape):
        """Refines the static shape of the variable and of its snapshot."""
        self._variable.set_shape(shape)
        self._snapshot.set_shape(shape)

    def ref(self):
        """A hashable reference to this variable (`ref().deref() is self`)."""
        return Reference(self)

    experimental_ref = ref

    def _set_save_slice_info(self, save_slice_info):
        self._save_slice_info = save_slice_info

    def _get_save_slice_info(self):
        return self._save_slice_info

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
        """The `v/read` snapshot: the value ops normally read (eagerly: a new read)."""
        if self._eager:
            return array_ops.identity(self._variable, name="read")
        return self._snapshot

    def numpy(self):
        """The current value (eager execution only)."""
        if not self._eager:
            raise NotImplementedError("numpy() is only available when eager execution is "
                                      "enabled.")
        return self._variable.numpy()

    def read_value(self):
        """A new read of the variable (a fresh identity op)."""
        with _graph.name_scope("Read"):
            return array_ops.identity(self._variable, name="read")

    def initialized_value(self):
        """The variable's value once initialized: its current value if it is initialized
        when this runs, else its initial value (TF1's cond), so another variable can be
        initialized from it in the same run as this one: `tf.Variable(w.initialized_value()
        * 2)` with `tf.global_variables_initializer()`."""
        from tensorflux._src.ops.control.control_flow_ops import cond
        graph = _graph.get_default_graph()
        with outside_bodies(graph), _graph.control_dependencies(None):  # TF1's init_scope
            return cond(state_ops.is_variable_initialized(self._variable), self.read_value,
                        lambda: self._initial_value)

    def eval(self, session=None):
        return self._snapshot.eval(session=session)

    # -- writing ----------------------------------------------------------------------------
    def assign(self, value, use_locking=False, name=None, read_value=True):
        op = state_ops.assign(self._variable, value, use_locking=use_locking, name=name)
        return self._assigned(op, read_value)

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        op = state_ops.assign_add(self._variable, delta, use_locking=use_locking, name=name)
        return self._assigned(op, read_value)

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        op = state_ops.assign_sub(self._variable, delta, use_locking=use_locking, name=name)
        return self._assigned(op, read_value)

    def _assigned(self, op, read_value):
        """What an assign returns: in graphs the ref output (or the op), as TF1's ref
        variables; eagerly, as TF's resource variables, the new value read as a plain
        (non-ref) tensor, or None when `read_value=False` (the write already ran)."""
        if not self._eager:
            return op if read_value else op.op
        return array_ops.identity(op) if read_value else None

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        return state_ops.scatter_update(self._variable, sparse_delta.indices,
                                        sparse_delta.values, use_locking, name)

    def load(self, value, session=None):
        """Assigns `value` by running the initializer with its initial value fed."""
        from tensorflux._src.framework.default_session import get_default_session
        session = session or get_default_session()
        if session is None:
            raise ValueError("Either session argument should be provided or default session "
                             "should be established")
        session.run(self._initializer_op, {self._initializer_op.inputs[1]: value})

    def __repr__(self):
        if getattr(self, "_eager", False):
            return (f"<tf.Variable '{self.name}' shape={self.shape} "
                    f"dtype={self.dtype.base_dtype.name}, "
                    f"numpy={self._variable._numpy_text(is_repr=True)}>")
        return (f"<tf.Variable '{self.name}' shape={self.shape} "
                f"dtype={self.dtype.name}>")

    __hash__ = object.__hash__

    def __bool__(self):
        return self.value().__bool__()

    def __iter__(self):
        raise TypeError("'Variable' object is not iterable.")


VariableV1 = Variable


def _enum_arg(enum_type, value, what):
    if value is None:
        return enum_type(0)
    try:
        return enum_type(value.value if isinstance(value, enum.Enum) else value)
    except ValueError:
        raise ValueError(f"Invalid variable {what} mode: {value} for variable: "
                         f"{enum_type.__name__}") from None


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


class PartitionedVariable:
    """TF1's sharded variable: Variables `name/part_0`, `name/part_1`, ... that together
    make one variable of `shape`, split along one axis. It iterates over its parts
    (sorted by offset), converts to their concatenation (`name/ConcatPartitions/concat`
    then an identity named `name`) and is saved by Saver as one tensor under `name`."""

    def __init__(self, name, shape, dtype, variable_list, partitions):
        if not isinstance(variable_list, (list, tuple)):
            raise TypeError(f"variable_list is not a list or tuple: {variable_list}")
        if not isinstance(partitions, (list, tuple)):
            raise TypeError(f"partitions is not a list or tuple: {partitions}")
        if not all(p >= 1 for p in partitions):
            raise ValueError(f"partition values must be positive: {partitions}")
        if not variable_list:
            raise ValueError("variable_list may not be empty")
        shape = tensor_shape.as_shape(shape)
        for v in variable_list:
            if v._get_save_slice_info() is None:
                raise ValueError(f"All variables must have a save_slice_info available: "
                                 f"{[v.name for v in variable_list]}")
            if len(shape) != len(partitions):
                raise ValueError(f"len(shape) != len(partitions): {shape} vs. {partitions}")
            if list(v._get_save_slice_info().full_shape) != shape.as_list():
                raise ValueError(f"All variables' full shapes must match shape: {shape}; but "
                                 f"full shapes were: {[v._get_save_slice_info().full_shape]}")
        self._variable_list = sorted(variable_list,
                                     key=lambda v: v._get_save_slice_info().var_offset)
        self._name = name
        self._shape = shape
        self._dtype = dtype
        self._partitions = list(partitions)
        self._as_tensor = None

    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self):
        axes = self._partition_axes()
        if len(axes) > 1:
            raise ValueError(f"Cannot get a length of {len(axes)} > 1 partition axes")
        return len(self._variable_list)

    def _partition_axes(self):
        if all(p == 1 for p in self._partitions):
            return [0]
        return [i for i, p in enumerate(self._partitions) if p > 1]

    def _concat(self):
        if len(self._variable_list) == 1:
            with _graph.name_scope(None):
                return array_ops.identity(self._variable_list[0], name=self._name)
        axes = self._partition_axes()
        if len(axes) > 1:
            raise NotImplementedError(f"Cannot concatenate along more than one dimension: "
                                      f"{axes}.  Multi-axis partition concat is not supported")
        with _graph.name_scope(self._name + "/ConcatPartitions/"):
            concatenated = array_ops.concat(self._variable_list, axes[0])
        with _graph.name_scope(None):
            return array_ops.identity(concatenated, name=self._name)

    def as_tensor(self):
        """The full value: the parts concatenated (created outside control dependencies)."""
        with _graph.control_dependencies(None):
            return self._concat()

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    @property
    def graph(self):
        return self._variable_list[0].graph

    def _get_variable_list(self):
        return self._variable_list

    def _get_partitions(self):
        return self._partitions

    def _apply_assign_fn(self, assign_fn, value):
        axes = self._partition_axes()
        if len(axes) > 1:
            raise NotImplementedError(f"Cannot do assign action along more than one dimension: "
                                      f"{axes}.  Multi-axis partition assign action is not "
                                      f"supported ")
        if isinstance(value, list):
            assert len(value) == len(self._variable_list)
            values = value
        elif isinstance(value, PartitionedVariable):
            values = list(value)
        else:
            sizes = [v.shape[axes[0]].value for v in self._variable_list]
            values = slicing_ops.split(value, sizes, axis=axes[0])
        return [assign_fn(var, values[i]) for i, var in enumerate(self._variable_list)]

    def assign(self, value, use_locking=False, name=None, read_value=True):
        ops = self._apply_assign_fn(
            lambda var, v: var.assign(v, use_locking=use_locking, name=name,
                                      read_value=read_value), value)
        return ops

    def assign_add(self, value, use_locking=False, name=None, read_value=True):
        return self._apply_assign_fn(
            lambda var, v: var.assign_add(v, use_locking=use_locking, name=name,
                                          read_value=read_value), value)

    def assign_sub(self, value, use_locking=False, name=None, read_value=True):
        return self._apply_assign_fn(
            lambda var, v: var.assign_sub(v, use_locking=use_locking, name=name,
                                          read_value=read_value), value)

    def __repr__(self):
        return (f"<tf.PartitionedVariable '{self._name}' shape={self._shape} "
                f"dtype={self._dtype.name} parts={len(self._variable_list)}>")


def _convert_partitioned(var, dtype=None, name=None, as_ref=False):
    if dtype is not None and not dtype.is_compatible_with(var.dtype):
        raise ValueError(f"Incompatible type conversion requested to type '{dtype.name}' for "
                         f"variable of type '{var.dtype.name}'")
    if as_ref:
        raise NotImplementedError("PartitionedVariable doesn't support being used as a "
                                  "reference.")
    return var.as_tensor()


register_tensor_conversion_function(PartitionedVariable, _convert_partitioned)


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


def assert_variables_initialized(var_list=None):
    """The ranks of `var_list`'s variables (default: all global and local ones), read
    from their values: running it raises FailedPreconditionError naming the first
    uninitialized variable. None for an empty list, as in TF1."""
    if var_list is None:
        var_list = global_variables() + local_variables()
    if not var_list:
        return None
    ranks = []
    for var in var_list:
        with var.graph.colocate_with(var.op):
            ranks.append(array_ops.rank(var.read_value()))
    return ranks[0] if len(ranks) == 1 else array_ops.stack(ranks)


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor: names of the variables in var_list (default: all global and
    local variables) that have no value in the session yet."""
    from tensorflux._src.ops.array import host_ops  # noqa: F401  (registers the op)
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
