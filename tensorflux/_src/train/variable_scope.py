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
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import slicing_ops
from tensorflux._src.ops.state import init_ops
from tensorflux._src.train.variables import PartitionedVariable, Variable

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

    def set_caching_device(self, caching_device):
        self._caching_device = caching_device

    def set_partitioner(self, partitioner):
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter):
        self._custom_getter = custom_getter

    def set_use_resource(self, use_resource):
        self._use_resource = use_resource

    # The collections of this scope: items whose names start with "<scope>/".
    def get_collection(self, name):
        scope = self._name + "/" if self._name else ""
        return _graph.get_collection(name, scope)

    def trainable_variables(self):
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def global_variables(self):
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def local_variables(self):
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def get_variable(self, name, shape=None, dtype=None, initializer=None, regularizer=None,
                     reuse=None, trainable=None, collections=None, caching_device=None,
                     partitioner=None, validate_shape=True, use_resource=None,
                     custom_getter=None, constraint=None, synchronization=None,
                     aggregation=None):
        # As TF1: "scope/" + name even for an empty name ("scope/", which names the
        # variable "scope", how slot_creator names slots).
        full_name = f"{self._name}/{name}" if self._name else name
        reuse = self._reuse if reuse is None else (reuse or self._reuse)
        if dtype is not None and initializer is not None and not callable(initializer):
            init_dtype = convert_to_tensor(initializer).dtype.base_dtype
            if init_dtype != _dtypes.as_dtype(dtype):
                raise ValueError(f"Initializer type '{init_dtype}' and explicit dtype "
                                 f"'{_dtypes.as_dtype(dtype)}' don't match.")
        options = dict(
            shape=shape, dtype=dtype or self._dtype,
            initializer=initializer if initializer is not None else self._initializer,
            regularizer=regularizer if regularizer is not None else self._regularizer,
            reuse=reuse, trainable=True if trainable is None else trainable,
            collections=collections, validate_shape=validate_shape,
            caching_device=caching_device if caching_device is not None
            else self._caching_device,
            partitioner=partitioner if partitioner is not None else self._partitioner,
            use_resource=use_resource if use_resource is not None else self._use_resource,
            constraint=constraint if constraint is not None else self._constraint,
            synchronization=synchronization, aggregation=aggregation)
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
        self.partitioned_variables = {}
        self.scope_counts = {}
        self.current_scope = VariableScope(False)

    def get(self, name, shape, dtype, initializer, regularizer, reuse, trainable, collections,
            validate_shape, constraint, caching_device=None, partition_info=None):
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
                           validate_shape, constraint, caching_device, partition_info)
        self.variables[name] = var
        if regularizer is not None:
            with _graph.name_scope(f"{name}/Regularizer/"):
                loss = regularizer(var)
            if loss is not None:
                _graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return var

    @staticmethod
    def _create(name, shape, dtype, initializer, trainable, collections, validate_shape,
                constraint, caching_device=None, partition_info=None):
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
                if partition_info is None:
                    return init_fn(shape.as_list(), dtype=dtype)
                return init_fn(shape.as_list(), dtype=dtype, partition_info=partition_info)

            dtype_arg = dtype
        collections = list(collections) if collections is not None else None
        return Variable(init_value, name=name, trainable=trainable, collections=collections,
                        validate_shape=validate_shape, dtype=dtype_arg, constraint=constraint,
                        caching_device=caching_device)

    def get_partitioned(self, name, partitioner, shape, dtype, initializer, regularizer, reuse,
                        trainable, collections, validate_shape, constraint, caching_device):
        """TF1's _get_partitioned_variable: parts `name/part_<i>` with their SaveSliceInfo."""
        from_value = initializer is not None and isinstance(initializer, Tensor)
        if name in self.variables:
            raise ValueError(f"A partitioner was provided, but an unpartitioned version of the "
                             f"variable was found: {name}.  Perhaps a variable of the same name "
                             f"was already created without partitioning?")
        shape = tensor_shape.as_shape(shape)
        if from_value:
            shape = shape.merge_with(initializer.shape)
        partitions = None
        if not reuse or partitioner:
            partitions = _call_partitioner(partitioner, shape, dtype)
        if name in self.partitioned_variables:
            if reuse is False or reuse is None:
                raise ValueError(f"Partitioned variable with name {name} already exists. Did "
                                 f"you mean to set reuse=True or reuse=tf.AUTO_REUSE in "
                                 f"VarScope?")
            existing = self.partitioned_variables[name]
            if not shape.is_compatible_with(existing.get_shape()):
                raise ValueError(f"Trying to reuse partitioned variable {name}, but specified "
                                 f"shape {shape} and found shape {existing.get_shape()}.")
            if not dtype.is_compatible_with(existing.dtype):
                raise ValueError(f"Trying to reuse partitioned variable {name}, but specified "
                                 f"dtype {dtype.name} and found dtype {existing.dtype.name}.")
            if partitions is not None and existing._get_partitions() != list(partitions):
                raise ValueError(f"Trying to reuse partitioned variable {name}, but specified "
                                 f"partitions {list(partitions)} and found partitions "
                                 f"{existing._get_partitions()}.")
            return existing
        if reuse is True:
            raise ValueError(f"PartitionedVariable {name} does not exist, or was not created "
                             f"with tf.get_variable(). Did you mean to set reuse=False or "
                             f"reuse=tf.AUTO_REUSE in VarScope?")
        slice_dim, num_slices = _slice_dim_and_num_slices(partitions)
        if f"{name}/part_0" in self.variables:
            if f"{name}/part_{num_slices - 1}" not in self.variables:
                raise ValueError(f"Partitioner returned a different partitioning than what was "
                                 f"already found.  Partitioner returned {num_slices} shards, "
                                 f"and shard {name}/part_0 was found, but "
                                 f"{name}/part_{num_slices - 1} was not.")
            if f"{name}/part_{num_slices}" in self.variables:
                raise ValueError(f"Partitioner returned a different partitioning than what was "
                                 f"already found.  Partitioner returned {num_slices} shards, "
                                 f"and shard {name}/part_0 was found, but so was the extra "
                                 f"shard {name}/part_{num_slices}.")
        parts = []
        for i, (offset, part_shape) in enumerate(
                _iter_slices(shape.as_list(), num_slices, slice_dim)):
            part_name = f"{name}/part_{i}"
            info = _PartitionInfo(full_shape=shape.as_list(), var_offset=offset)
            init, init_shape = initializer, part_shape
            with _graph.name_scope(part_name + "/PartitionedInitializer"):
                if initializer is not None and not callable(initializer):
                    # A value for the whole variable: each part takes its slice of it.
                    whole = initializer if isinstance(initializer, Tensor) \
                        else convert_to_tensor(initializer, dtype=dtype)
                    init = slicing_ops.slice(whole, offset, part_shape)
                    dtype = init.dtype.base_dtype
                    init_shape = None
            with _graph.name_scope(None):
                var = self.get(part_name, init_shape, dtype, init, regularizer, reuse, trainable,
                               collections, validate_shape, constraint, caching_device, info)
            var._set_save_slice_info(Variable.SaveSliceInfo(name, shape.as_list(), offset,
                                                            part_shape))
            parts.append(var)
        partitioned = PartitionedVariable(name=name, shape=shape, dtype=dtype,
                                          variable_list=parts, partitions=list(partitions))
        self.partitioned_variables[name] = partitioned
        return partitioned


class _PartitionInfo:
    """Where a part sits in the full variable; initializers get it as `partition_info`."""

    def __init__(self, full_shape, var_offset):
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)

    def single_offset(self, shape):
        dim = self.single_slice_dim(shape)
        return 0 if dim is None else self.var_offset[dim]

    def single_slice_dim(self, shape):
        """The one dimension in which this part is smaller than the full variable."""
        dims = [i for i, (n, full) in enumerate(zip(shape, self.full_shape)) if n != full]
        if len(dims) > 1:
            raise ValueError(f"Cannot use single_slice_dim() with shape={shape} and "
                             f"self.full_shape={self.full_shape} since more than one "
                             f"dimension differ.")
        return dims[0] if dims else None


def _call_partitioner(partitioner, shape, dtype):
    """The partitioner's list of shards per axis, with TF1's checks."""
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of a new partitioned variable must be fully defined, but "
                         f"instead was {shape}.")
    if shape.ndims < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1, shape: {shape}")
    slicing = partitioner(shape=shape, dtype=dtype)
    if not isinstance(slicing, (list, tuple)):
        raise ValueError(f"Partitioner must return a sequence, but saw: {slicing}")
    if len(slicing) != shape.ndims:
        raise ValueError(f"Partitioner returned a partition list that does not match the "
                         f"Variable's rank: {slicing} vs. {shape}")
    if any(p < 1 for p in slicing):
        raise ValueError(f"Partitioner returned zero partitions for some axes: {slicing}")
    if sum(p > 1 for p in slicing) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: shape: {shape}, "
                         f"partitioning: {slicing}")
    return list(slicing)


def _slice_dim_and_num_slices(slicing):
    for dim, num in enumerate(slicing):
        if num > 1:
            break
    else:
        return 0, 1  # no partitioning: one part
    for i in range(dim + 1, len(slicing)):
        if slicing[i] > 1:
            raise ValueError(f"Can only slice a variable along one dimension: slicing: "
                             f"{slicing}, partitioned dimension: {dim}")
    return dim, num


def _iter_slices(full_shape, num_slices, slice_dim):
    """(offset, shape) of each part: the first `size % num_slices` parts get one more."""
    with_excess = full_shape[slice_dim] % num_slices
    offset = [0] * len(full_shape)
    min_len = full_shape[slice_dim] // num_slices
    for i in range(num_slices):
        shape = list(full_shape)
        shape[slice_dim] = min_len + (1 if i < with_excess else 0)
        yield list(offset), shape
        offset[slice_dim] += shape[slice_dim]


def _true_getter(name, shape=None, dtype=_dtypes.float32, initializer=None, regularizer=None,
                 reuse=None, trainable=True, collections=None, validate_shape=True,
                 constraint=None, caching_device=None, partitioner=None, **unused):
    """What a custom getter calls to get or create the variable itself."""
    store = _store()
    is_scalar = isinstance(shape, (list, tuple)) and not shape
    if partitioner is not None and not is_scalar:
        if not callable(partitioner):
            raise ValueError(f"Partitioner must be callable, but received: {partitioner}")
        with _graph.name_scope(None):
            return store.get_partitioned(
                name, partitioner, shape, _dtypes.as_dtype(dtype), initializer, regularizer,
                reuse, trainable, collections, validate_shape, constraint, caching_device)
    if reuse is True and partitioner is None and name in store.partitioned_variables:
        # Reusing a partitioned variable needs no partitioner.
        return store.get_partitioned(
            name, None, shape, _dtypes.as_dtype(dtype), initializer, regularizer, reuse,
            trainable, collections, validate_shape, constraint, caching_device)
    return store.get(name, shape=shape, dtype=dtype, initializer=initializer,
                     regularizer=regularizer, reuse=reuse, trainable=trainable,
                     collections=collections, validate_shape=validate_shape,
                     constraint=constraint, caching_device=caching_device)


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
    """Gets an existing variable named `scope/name`, or creates it (see module doc); with a
    partitioner (here or the scope's), a PartitionedVariable of parts `name/part_<i>`."""
    return get_variable_scope().get_variable(
        name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
        trainable=trainable, collections=collections, caching_device=caching_device,
        partitioner=partitioner, validate_shape=validate_shape, use_resource=use_resource,
        custom_getter=custom_getter, constraint=constraint, synchronization=synchronization,
        aggregation=aggregation)


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
