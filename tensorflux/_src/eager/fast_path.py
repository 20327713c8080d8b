"""The eager per-op fast path: a repeated op skips apply_op's graph bookkeeping.

`apply_op` (ops/op_builder.py) converts inputs, checks TF's dtype rules, resolves attrs,
infers shapes, builds an Operation, and the EagerGraph then runs it. For a given op type,
attrs and input dtypes/shapes all of that computes the same thing every time, so the
first call takes the full path and *learns* an entry; later calls with the same key:

    key = (op type, name of each argument with its EagerTensor's (dtype, shape), or the
           Python scalar's (type, value), or the attr's value)
    entry = the op's record, output dtypes, the jitted kernel, and the converted
            constants of Python-scalar inputs

look the entry up, call the cached jitted kernel on the inputs' device buffers, and wrap
the outputs in EagerTensors of a cheaply built Operation (no name uniquing, shape
inference, or graph insertion: the EagerGraph keeps none of that anyway). Output static
shapes are the values' shapes, so a shape function that reads input values cannot make a
stale cached shape.

Only ops whose every step is a pure function of the key learn an entry: a compiled
(lowered) op, not stateful, random, a writer, a host or functional op, with single
(non-list) inputs and outputs, whose kernel needed no baked-in values and records no
run-time checks or prints, and whose shape inference read no input value. Anything
else, or anything unusual at call time (a ref input, a graph tensor, a list argument, an
invalid name, a kernel that raises), takes the full path, which gives TF's errors naming
the op. When a GradientTape records, the fast op carries its inputs and is offered to
the tape exactly as a full-path op is.
"""

from __future__ import annotations

import threading

import jax
import numpy as np

from tensorflux._src.eager import execute, tape
from tensorflux._src.eager.eager_tensor import EagerTensor, next_id
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.operation import VALID_OP_NAME, Operation
from tensorflux._src.ops import shape_fns
from tensorflux._src.ops.registry import lookup

MISS = object()
_MAX_ENTRIES = 20000  # Python scalars are in keys: bound what a loop over values keeps
_SCALARS = (int, float, bool)


class Entry:
    __slots__ = ("arg_names", "attrs", "constants", "dtypes", "kernel", "op_def", "single")

    def __init__(self, op_def, attrs, constants, dtypes, kernel):
        self.op_def = op_def
        self.attrs = attrs
        self.arg_names = tuple(a.name for a in op_def.input_args)
        self.constants = constants  # arg name -> EagerTensor made from a Python scalar
        self.dtypes = dtypes
        self.kernel = kernel
        self.single = len(dtypes) == 1 and not op_def.output_args[0].is_list


class _Learner:
    """What the full path of one eligible call left behind (filled by EagerGraph)."""

    __slots__ = ("inputs", "kernel", "op", "op_type")

    def __init__(self, op_type):
        self.op_type = op_type
        self.op = None
        self.inputs = None
        self.kernel = None


class Stats:
    def __init__(self):
        self.hits = 0
        self.learned = 0


stats = Stats()
_entries = {}
_not_eligible = set()  # op types whose record rules the fast path out
_local = threading.local()
_shapes = {}  # tuple -> TensorShape (immutable, shared)
# Op types whose kernel bakes small integer inputs in (reduction axes, Reshape's shape,
# slice bounds) or whose shape inference reads input values: their keys hold the values
# of integer and bool inputs up to _BY_VALUE_MAX elements.
_value_keyed = set()
_BY_VALUE_MAX = execute._STATIC_MAX_ELEMENTS
_device_constants = {}  # (dtype, shape, bytes) of a small constant -> its device buffer
_SMALL_CONSTANT = 64


def learning():
    """The innermost call being learned, or None (read by EagerGraph._add_op)."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


def _eligible(op_def):
    return (op_def.lower is not None and not op_def.stateful and not op_def.random
            and not op_def.writes and op_def.host is None and not op_def.functional
            and not op_def.is_variable and not op_def.checks_initialized
            and op_def.name != "Const" and op_def.output_args
            and not any(a.is_list or a.type_list_attr or a.is_ref
                        for a in op_def.input_args)
            and not any(a.is_list or a.type_list_attr or a.is_ref
                        for a in op_def.output_args))


def _key(op_type, kwargs):
    parts = [op_type]
    by_value = op_type in _value_keyed
    for k, v in kwargs.items():
        cls = v.__class__
        if cls is EagerTensor:
            if v._dtype._is_ref_dtype:
                return None
            value = v._value
            if by_value and value.dtype.kind in "iub" and value.size <= _BY_VALUE_MAX:
                host = v.numpy()  # cached on the tensor: a constant's is known already
                parts.append((k, v._dtype, value.shape, host.tobytes()))
            else:
                parts.append((k, v._dtype, value.shape))
        elif cls in _SCALARS or cls is str or v is None:
            parts.append((k, cls, v))
        elif (cls is list or cls is tuple) and _flat_scalars(v):
            parts.append((k, cls, tuple((x.__class__, x) for x in v)))
        else:
            try:
                parts.append((k, cls, execute._freeze(v)))
            except TypeError:
                return None
    return tuple(parts)


def _op_name(graph, name):
    """The name the full path's name_scope gives (a trailing "/" is an absolute scope,
    as wrappers pass `name=scope`); None when it is not a valid op name."""
    if name.__class__ is not str:
        return None
    if name.endswith("/"):
        name = name[:-1]
    elif graph._name_stack:
        name = graph._name_stack + "/" + name
    return name if VALID_OP_NAME.match(name) else None


def _flat_scalars(values):
    return all(x.__class__ in _SCALARS for x in values)


def _shape(dims):
    shape = _shapes.get(dims)
    if shape is None:
        shape = _shapes[dims] = tensor_shape.TensorShape(list(dims))
    return shape


def apply(graph, op_type, name, kwargs, slow):
    """The op's result through a learned entry, else through `slow` (apply_op's full
    path), learning an entry when the op qualifies."""
    if op_type == "Const":
        result = _const(graph, name, kwargs)
        return slow(op_type, name, kwargs) if result is MISS else result
    if op_type in _not_eligible:
        return slow(op_type, name, kwargs)
    key = _key(op_type, kwargs)
    entry = _entries.get(key) if key is not None else None
    if entry is not None:
        result = _run(graph, entry, name, kwargs)
        if result is not MISS:
            return result
        return slow(op_type, name, kwargs)
    if key is None:
        return slow(op_type, name, kwargs)
    op_def = lookup(op_type)
    if not _eligible(op_def):
        _not_eligible.add(op_type)
        return slow(op_type, name, kwargs)
    inputs_by_name = dict(kwargs)
    learner = _Learner(op_type)
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    stack.append(learner)
    reads = shape_fns.eager_value_reads[0]
    try:
        result = slow(op_type, name, kwargs)
    finally:
        stack.pop()
    read_values = shape_fns.eager_value_reads[0] != reads
    by_value = read_values or (learner.kernel is not None and learner.kernel.static_inputs)
    if by_value and op_type not in _value_keyed:
        _value_keyed.add(op_type)  # learned on the next call, keyed by values
        return result
    _learn(key, op_def, learner, result, inputs_by_name)
    return result


def _learn(key, op_def, learner, result, kwargs):
    op = learner.op
    kernel = learner.kernel
    if op is None or kernel is None or kernel.collector.checks \
            or kernel.collector.emits or kernel.collector.uses_callbacks:
        return
    outputs = result if isinstance(result, list) else [result]
    if any(getattr(t, "_op", None) is not op for t in outputs):
        return
    constants = {}
    for arg, tensor in zip(op_def.input_args, learner.inputs):
        value = kwargs.get(arg.name)
        if value.__class__ is not EagerTensor:
            if not (value.__class__ in _SCALARS or value.__class__ in (list, tuple)
                    and _flat_scalars(value)) or tensor.__class__ is not EagerTensor:
                return
            constants[arg.name] = tensor
    if len(_entries) >= _MAX_ENTRIES:
        _entries.clear()
    _entries[key] = Entry(op_def, dict(op._attrs), constants, [t._dtype for t in op.outputs], kernel)
    stats.learned += 1


def _run(graph, entry, name, kwargs):
    constants = entry.constants
    inputs = [kwargs[n] if n not in constants else constants[n] for n in entry.arg_names]
    kernel = entry.kernel
    values = [t._value for t in inputs]
    if kernel.static_inputs:  # baked in: the key held their values
        values = [v for i, v in enumerate(values) if i not in kernel.static_inputs]
    try:
        outs = kernel.fn(*values)[0]
    except Exception:  # noqa: BLE001 - the full path gives the op's error
        return MISS
    op_name = _op_name(graph, name or entry.op_def.name)
    if op_name is None:
        return MISS
    op = Operation.__new__(Operation)
    op._graph = graph
    op._op_def = entry.op_def
    op._name = op_name
    op._inputs = inputs
    op._attrs = dict(entry.attrs)
    op._control_inputs = []
    op._device = ""
    op._id = 0
    op._body = None
    op._colocation_groups = None
    op._container = ""
    op._gradient_override = graph._gradient_override_map.get(entry.op_def.name) \
        if graph._gradient_override_map else None
    tensors = []
    for i, (dtype, value) in enumerate(zip(entry.dtypes, outs)):
        t = EagerTensor.__new__(EagerTensor)
        t._op = op
        t._value_index = i
        t._dtype = dtype
        t._shape = _shape(value.shape)
        t._consumers = []
        t._value = value
        t._id = next_id()
        tensors.append(t)
    op._outputs = tensors
    if not tape.record(op):
        op._inputs = ()
    stats.hits += 1
    return tensors[0] if entry.single else tensors


def _const(graph, name, kwargs):
    """A Const's EagerTensor straight from its value: small values' device buffers are
    shared (they are immutable), and the host value is kept for static reads."""
    value, dtype = kwargs.get("value"), kwargs.get("dtype")
    if len(kwargs) != 2 or value.__class__ is not np.ndarray or value.dtype == object \
            or dtype is None:
        return MISS
    op_name = _op_name(graph, name or "Const")
    if op_name is None:
        return MISS
    small = value.size <= _SMALL_CONSTANT
    if small:
        key = (value.dtype.str, value.shape, value.tobytes())
        buffer = _device_constants.get(key)
        if buffer is None:
            if len(_device_constants) >= _MAX_ENTRIES:
                _device_constants.clear()
            buffer = _device_constants[key] = jax.device_put(value)
    else:
        buffer = jax.device_put(value)
    t = wrap(graph, op_name, buffer, dtype, {"value": value, "dtype": dtype})
    if small:
        host = value.copy()
        t._numpy = host[()] if host.ndim == 0 else host
    stats.hits += 1
    return t


def wrap(graph, op_name, value, dtype, attrs=None):
    """An EagerTensor over `value` (a device buffer, kept as it is), the output of a
    Const-typed Operation named `op_name` made without graph bookkeeping: a constant,
    or an output of a defun'd function."""
    if isinstance(value, np.ndarray) and value.dtype != object:
        value = jax.device_put(value)
    op = Operation.__new__(Operation)
    op._graph = graph
    op._op_def = lookup("Const")
    op._name = op_name
    op._inputs = ()
    op._attrs = attrs if attrs is not None else {"dtype": dtype}
    op._control_inputs = []
    op._device = ""
    op._id = 0
    op._body = None
    op._colocation_groups = None
    op._container = ""
    op._gradient_override = None
    t = EagerTensor.__new__(EagerTensor)
    t._op = op
    t._value_index = 0
    t._dtype = dtype
    t._shape = _shape(tuple(np.shape(value)))
    t._consumers = []
    t._value = value
    t._id = next_id()
    op._outputs = [t]
    return t



