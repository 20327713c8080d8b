"""`Operation` (a node of the dataflow graph) and `Tensor` (one of its outputs)."""

from __future__ import annotations

import re

from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.default_session import (eval_using_default_session,
                                                       run_using_default_session)
from tensorflux._src.framework.device import canonical_name
from tensorflux._src.framework.dtypes import DType

VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")


class Operation:
    """A node in a Graph: an op type from the registry applied to input Tensors."""

    def __init__(self, graph, op_def, name, inputs, attrs, output_dtypes, output_shapes):
        if not VALID_OP_NAME.match(name):
            raise ValueError(f"'{name}' is not a valid node name. Op names start with a "
                             f"letter, digit or '.', then letters, digits, '_', '.', '-', '/'.")
        self._graph = graph
        self._op_def = op_def
        self._name = name
        self._inputs = tuple(inputs)
        self._attrs = attrs
        self._control_inputs = []
        self._device = ""
        self._id = None  # set by Graph when the op is added
        self._body = None  # the control-flow body (cond branch, loop body) it belongs to
        self._colocation_groups = None  # set by `tf.colocate_with`: [b"loc:@<op name>"]
        self._container = ""  # resource container of a stateful op (`Graph.container`)
        self._outputs = [Tensor(self, i, dt, shape)
                         for i, (dt, shape) in enumerate(zip(output_dtypes, output_shapes))]

    # -- identity and structure ---------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def type(self) -> str:
        return self._op_def.name

    @property
    def op_def(self):
        return self._op_def

    @property
    def graph(self):
        return self._graph

    @property
    def inputs(self):
        return self._inputs

    @property
    def outputs(self):
        return self._outputs

    def values(self):
        return tuple(self._outputs)

    def colocation_groups(self):
        """The ops this op is placed with, as TF names them: `[b"loc:@<op name>"]`."""
        if self._colocation_groups:
            return list(self._colocation_groups)
        return [b"loc:@" + self._name.encode()]

    def experimental_set_type(self, type_proto):
        """Sets the op's full-type information (TF 2.x). tensorflux infers types from the
        op's record, so it only keeps the value for `experimental_type`."""
        self._full_type = type_proto

    @property
    def control_inputs(self):
        return list(self._control_inputs)

    @property
    def device(self) -> str:
        return self._device

    def _set_device(self, device):
        self._device = canonical_name(device) if device else ""

    def _add_control_input(self, op):
        if not isinstance(op, Operation):
            raise TypeError(f"op must be an Operation, got {type(op).__name__}")
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            self._graph._version += 1  # what a run needs may have changed

    def _add_control_inputs(self, ops):
        for op in ops:
            self._add_control_input(op)

    @property
    def node_def(self):
        return _NodeDef(self)

    @property
    def traceback(self):
        return []

    # -- attrs --------------------------------------------------------------------
    @property
    def attrs(self):
        return dict(self._attrs)

    def get_attr(self, name):
        try:
            return self._attrs[name]
        except KeyError:
            raise ValueError(f"Operation {self._name!r} has no attr named {name!r}.") from None

    def _set_attr(self, name, value):
        self._attrs[name] = value

    # -- running ------------------------------------------------------------------
    def run(self, feed_dict=None, session=None):
        """Runs this op in `session` (or the default session)."""
        run_using_default_session(self, feed_dict, self._graph, session)

    def __repr__(self):
        return f"<tf.Operation '{self._name}' type={self.type}>"

    def __str__(self):
        return str(self.node_def)


class _NodeDef:
    """A read-only NodeDef view whose text form matches TF's `str(op)`."""

    def __init__(self, op):
        self.name = op.name
        self.op = op.type
        self.input = [t.name if t.value_index else t.op.name for t in op.inputs]
        self.input += ["^" + c.name for c in op.control_inputs]
        self.device = op.device
        self.attr = dict(op._attrs)

    def __str__(self):
        lines = [f'name: "{self.name}"', f'op: "{self.op}"']
        lines += [f'input: "{i}"' for i in self.input]
        if self.device:
            lines.append(f'device: "{self.device}"')
        for key in sorted(self.attr):
            lines.append(f"attr {{\n  key: \"{key}\"\n  value: {_attr_text(self.attr[key])}\n}}")
        return "\n".join(lines) + "\n"


def _attr_text(value):
    if isinstance(value, DType):
        return f"{{ type: DT_{value.name.upper()} }}"
    if isinstance(value, tensor_shape.TensorShape):
        return f"{{ shape: {value} }}"
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"{{ tensor: shape {tuple(value.shape)} }}"
    return f"{{ {value!r} }}"


class Reference:
    """A hashable handle comparing by identity (`Tensor.ref()`, `Variable.ref()`), so
    tensors can be dict keys and set members; `deref()` gives the object back."""

    __slots__ = ("_wrapped",)

    def __init__(self, wrapped):
        self._wrapped = wrapped

    def deref(self):
        return self._wrapped

    def __eq__(self, other):
        return isinstance(other, Reference) and self._wrapped is other._wrapped

    def __hash__(self):
        return id(self._wrapped)

    def __repr__(self):
        return f"<Reference wrapping {self._wrapped!r}>"


# The operators TF overloads on tensors (tensorflux/_src/ops/overloads.py defines them).
OVERLOADABLE_OPERATORS = frozenset({
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__div__",
    "__rdiv__", "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
    "__rmod__", "__lt__", "__le__", "__gt__", "__ge__", "__ne__", "__eq__", "__and__",
    "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__getitem__", "__pow__",
    "__rpow__", "__invert__", "__neg__", "__abs__", "__matmul__", "__rmatmul__",
})


class Tensor:
    """A symbolic handle to one output of an Operation: `op.name:value_index`."""

    OVERLOADABLE_OPERATORS = OVERLOADABLE_OPERATORS

    # Makes numpy defer to our reflected operators (`np_array + tensor`).
    __array_priority__ = 100
    _is_eager = False  # EagerTensor (eager/eager_tensor.py): the value is known

    def __init__(self, op, value_index, dtype, shape):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = tensor_shape.as_shape(shape)
        self._consumers = []

    @property
    def op(self) -> Operation:
        return self._op

    @property
    def value_index(self) -> int:
        return self._value_index

    @property
    def dtype(self) -> DType:
        return self._dtype

    @property
    def graph(self):
        return self._op._graph

    @property
    def name(self) -> str:
        return f"{self._op._name}:{self._value_index}"

    @property
    def device(self) -> str:
        return self._op._device

    @property
    def shape(self) -> tensor_shape.TensorShape:
        return self._shape

    def get_shape(self) -> tensor_shape.TensorShape:
        return self._shape

    @property
    def ndim(self):
        """The static rank, or None when it is unknown."""
        return self._shape.ndims

    def ref(self):
        """A hashable reference to this tensor (`ref().deref() is self`)."""
        return Reference(self)

    experimental_ref = ref

    def set_shape(self, shape):
        """Refines the static shape; raises ValueError when `shape` is incompatible."""
        shape = tensor_shape.as_shape(shape)
        if not self._shape.is_compatible_with(shape):
            raise ValueError(f"Tensor's shape {self._shape} is not compatible with supplied "
                             f"shape {shape}")
        self._shape = self._shape.merge_with(shape)

    def consumers(self):
        return list(self._consumers)

    def eval(self, feed_dict=None, session=None):
        """Evaluates this tensor in `session` (or the default session)."""
        return eval_using_default_session(self, feed_dict, self.graph, session)

    def _as_node_def_input(self):
        return self._op._name if self._value_index == 0 else self.name

    # -- python protocol ----------------------------------------------------------
    def __str__(self):
        parts = [f'"{self.name}"']
        if self._shape.ndims is not None:
            parts.append(f"shape={self._shape}")
        parts.append(f"dtype={self._dtype.name}")
        if self.device:
            parts.append(f"device={self.device}")
        return "Tensor(" + ", ".join(parts) + ")"

    def __repr__(self):
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    __hash__ = object.__hash__  # tensors compare by identity in TF1 graphs

    def __bool__(self):
        raise TypeError("Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is "
                        "not None:` instead of `if t:` to test if a tensor is defined, and use "
                        "TensorFlow ops such as tf.cond to execute subgraphs conditioned on "
                        "the value of a tensor.")

    def __iter__(self):
        raise TypeError("Tensor objects are only iterable when eager execution is enabled. "
                        "To iterate over this tensor use tf.map_fn.")

    def __len__(self):
        raise TypeError(f"len is not well defined for symbolic Tensors. ({self.name}) Please "
                        f"call `x.shape` rather than `len(x)` for shape information.")

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(f"Cannot convert a symbolic Tensor ({self.name}) to a numpy "
                                  f"array. Run it in a Session to get its value.")
