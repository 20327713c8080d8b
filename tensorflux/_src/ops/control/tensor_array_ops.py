"""`tf.TensorArray`: TF1's write-once arrays of tensors, on TF's TensorArray*V3 ops.

TF1 keeps a TensorArray in a resource that its ops mutate, ordered by a dummy float
`flow`. Here the flow's value is the array itself (`compiler/ta_buffer.TABuffer`: a
fixed-capacity buffer, its written marks and size), so every op is a pure function
from flow to flow: outside loops they are ordinary ops, and a TensorArray passed
through `tf.while_loop` is a loop variable whose flow `lax.while_loop`/`lax.scan`
carries (the `TensorArray` class is a JAX pytree whose only leaf is its flow, so
while_loop and cond flatten it exactly as TF1 converts TensorArrays to flows). The
handle names the array; its value is a placeholder.

Static shapes follow TF1's Python class (the element shape is inferred from writes and
shared by every TensorArray built from the same handle); run-time errors are TF's
kernel messages (tensor_array.h): writing twice, writing past a fixed size, reading
past the size; unwritten elements read as zeros once the element shape is known, as
TF 1.15's kernel does. What a functional value cannot see is not checked: a read does
not clear an element (`clear_after_read`), and `close` does not invalidate the array.

Gradients are TF1's tensor_array_grad.py: a gradient array (TensorArrayGradV3) has the
forward array's shape, reading element i's gradient where the forward op wrote it and
adding up the gradients of repeated reads. Inside a while loop the loop's gradient is
the VJP of its lowering, which differentiates these ops' lowerings directly.

`size()` of a dynamic array is data-dependent, so outside loop bodies TensorArraySizeV3
runs as a host step (OpDef.host_outside_bodies): `stack()` after a loop then compiles
with the size known, one executable per size, as for any data-dependent shape.
"""

from __future__ import annotations

import contextlib

import jax
import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.compiler import ta_buffer as tab
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.type_spec import TensorSpec, TypeSpec, type_spec_from_value
from tensorflux._src.ops.array.array_ops import identity, shape as _shape
from tensorflux._src.ops.math.math_ops import cast, range as _range
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import static_input, with_rank
from tensorflux._src.ops.registry import REQUIRED, OpDef, register, register_gradient
from tensorflux._src.ops.shape_fns import static_value

__all__ = ["TensorArray", "TensorArraySpec"]

_FLOW = ("flow_in: float",)
_SCALAR = tensor_shape.TensorShape([])


def _as_partial(shape):
    """An attr shape (TensorShape or None) as a tuple with None dims, or None (unknown)."""
    shape = tensor_shape.as_shape(shape) if shape is not None else tensor_shape.unknown_shape()
    return None if shape.ndims is None else tuple(d.value for d in shape.dims)


def _dtype_name(np_dtype):
    return _dtypes.as_dtype(np.dtype(np_dtype))._tf_name


def _buffer(flow):
    if not tab.is_buffer(flow):
        raise errors.InvalidArgumentError(
            None, None, "TensorArray flow_in is not the flow of a TensorArray: a TensorArray's "
            "flow can only come from TensorArray ops (or a loop or cond carrying one).")
    return flow


def _check_dtype(buf, dtype, what):
    want = np.dtype(dtype.as_numpy_dtype)
    if want != buf.elem_dtype:
        raise errors.InvalidArgumentError(
            None, None, f"TensorArray dtype is {_dtype_name(buf.elem_dtype)} but Op {what} "
            f"dtype {_dtype_name(want)}.")


# -- records ----------------------------------------------------------------------------

def _array_shape(op):
    with_rank(op.inputs[0].shape, 0)
    return [tensor_shape.TensorShape([2]), _SCALAR]


def _lower_array(size, dtype, element_shape, dynamic_size, tensor_array_name, _ta_info):
    size = static_input(size, "TensorArrayV3", "size")
    if size.ndim != 0:
        raise errors.InvalidArgumentError(None, None, f"TensorArray size must be scalar, but "
                                          f"had shape: [{','.join(map(str, size.shape))}]")
    if int(size) < 0:
        raise errors.InvalidArgumentError(None, None, "Size should be >= 0.")
    known = _as_partial(_ta_info.element_shape[0] if _ta_info is not None else element_shape)
    name = tensor_array_name or effects.current_op().name
    buf = tab.create(dtype.as_numpy_dtype, int(size), dynamic_size, name,
                     known if known is not None and None not in known else None)
    return np.zeros((2,), np.int32), buf


register(OpDef("TensorArrayV3", inputs=("size: int32",),
               outputs=("handle: resource", "flow: float"),
               attrs={"dtype": _dtypes.ALL, "element_shape": None, "dynamic_size": False,
                      "clear_after_read": True, "identical_element_shapes": False,
                      "tensor_array_name": "", "_ta_info": None},
               shape=_array_shape, lower=_lower_array, stateful=True, compiled_handle=True,
               not_differentiable=True))


def _lower_grad(handle, flow_in):
    buf = _buffer(flow_in)
    return handle, (buf if buf.is_grad else tab.zeros_like_grad(buf))


register(OpDef("TensorArrayGradV3", inputs=("handle: resource",) + _FLOW,
               outputs=("grad_handle: resource", "flow_out: float"),
               attrs={"source": REQUIRED},
               shape=lambda op: [tensor_shape.TensorShape([2]), _SCALAR],
               lower=_lower_grad, stateful=True, compiled_handle=True,
               not_differentiable=True))


def _write_shape(op):
    with_rank(op.inputs[1].shape, 0)
    with_rank(op.inputs[3].shape, 0)
    return _SCALAR


def _lower_write(handle, index, value, flow_in, T):
    buf = _buffer(flow_in)
    _check_dtype(buf, T, "is trying to write")
    return tab.write_many(buf, index, value)


register(OpDef("TensorArrayWriteV3", inputs=("handle: resource", "index: int32", "value: T")
               + _FLOW, outputs=("flow_out: float",), attrs={"T": _dtypes.ALL},
               shape=_write_shape, lower=_lower_write))


def _read_shape(op):
    with_rank(op.inputs[1].shape, 0)
    with_rank(op.inputs[2].shape, 0)
    return _handle_element_shape(op.inputs[0]) or tensor_shape.unknown_shape()


def _lower_read(handle, index, flow_in, dtype):
    buf = _buffer(flow_in)
    _check_dtype(buf, dtype, "requested")
    return tab.read_many(buf, index, _as_partial(effects.current_op().outputs[0].shape))


register(OpDef("TensorArrayReadV3", inputs=("handle: resource", "index: int32") + _FLOW,
               outputs=("value: dtype",), attrs={"dtype": _dtypes.ALL},
               shape=_read_shape, lower=_lower_read))


def _handle_element_shape(handle):
    """TF's handle shape inference: the element shape TensorArrayV3 was created with,
    when fully defined."""
    creator = handle.op
    if creator.type != "TensorArrayV3" or creator.get_attr("element_shape") is None:
        return None
    shape = tensor_shape.as_shape(creator.get_attr("element_shape"))
    return shape if shape.is_fully_defined() else None


def _gather_shape(op):
    indices = with_rank(op.inputs[1].shape, 1)
    with_rank(op.inputs[2].shape, 0)
    element = _handle_element_shape(op.inputs[0])
    if element is None:
        return tensor_shape.unknown_shape()
    return tensor_shape.TensorShape([indices.dims[0].value if indices.ndims else None]) \
        .concatenate(element)


def _lower_gather(handle, indices, flow_in, dtype, element_shape):
    buf = _buffer(flow_in)
    _check_dtype(buf, dtype, "requested")
    if np.size(indices) == 0 and buf.data is None:
        shape = _as_partial(element_shape)
        if shape is None or None in shape:
            raise errors.UnimplementedError(
                None, None, f"TensorArray has size zero, but element shape "
                f"{tab._partial_str(shape)} is not fully defined. Currently only static "
                f"shapes are supported when packing zero-size TensorArrays.")
    known = _as_partial(effects.current_op().outputs[0].shape)
    return tab.read_many(buf, indices, None if known is None else known[1:])


register(OpDef("TensorArrayGatherV3", inputs=("handle: resource", "indices: int32") + _FLOW,
               outputs=("value: dtype",), attrs={"dtype": _dtypes.ALL, "element_shape": None},
               shape=_gather_shape, lower=_lower_gather))


def _scatter_shape(op):
    with_rank(op.inputs[1].shape, 1)
    with_rank(op.inputs[3].shape, 0)
    return _SCALAR


def _lower_scatter(handle, indices, value, flow_in, T):
    buf = _buffer(flow_in)
    _check_dtype(buf, T, "is trying to write")
    if np.ndim(value) == 0:
        raise errors.InvalidArgumentError(None, None, "Input value for unpack must be at least "
                                          "a vector but received shape: []")
    if np.shape(indices)[0] != np.shape(value)[0]:
        raise errors.InvalidArgumentError(
            None, None, f"Expected len(indices) == values.shape[0], but saw: "
            f"{np.shape(indices)[0]} vs. {np.shape(value)[0]}")
    if not buf.dynamic and tab.is_static(indices) and np.size(indices) and \
            tab.is_static(buf.size) and int(np.max(indices)) >= int(buf.size):
        raise errors.InvalidArgumentError(
            None, None, f"Max scatter index must be < array size ({int(np.max(indices))} vs. "
            f"{int(buf.size)})")
    return tab.write_many(buf, indices, value)


register(OpDef("TensorArrayScatterV3", inputs=("handle: resource", "indices: int32", "value: T")
               + _FLOW, outputs=("flow_out: float",), attrs={"T": _dtypes.ALL},
               shape=_scatter_shape, lower=_lower_scatter))


def _lower_concat(handle, flow_in, dtype, element_shape_except0):
    buf = _buffer(flow_in)
    _check_dtype(buf, dtype, "requested")
    return tab.concat(buf, _as_partial(element_shape_except0))


register(OpDef("TensorArrayConcatV3", inputs=("handle: resource",) + _FLOW,
               outputs=("value: dtype", "lengths: int64"),
               attrs={"dtype": _dtypes.ALL, "element_shape_except0": None},
               shape=lambda op: [tensor_shape.unknown_shape(), tensor_shape.TensorShape([None])],
               lower=_lower_concat))


def _split_shape(op):
    with_rank(op.inputs[2].shape, 1)
    with_rank(op.inputs[3].shape, 0)
    return _SCALAR


def _lower_split(handle, value, lengths, flow_in, T):
    buf = _buffer(flow_in)
    lengths = static_input(lengths, "TensorArraySplitV3", "lengths")
    if lengths.ndim != 1:
        raise errors.InvalidArgumentError(None, None, f"Expected lengths to be a vector, "
                                          f"received shape: {list(lengths.shape)}")
    if np.ndim(value) == 0:
        raise errors.InvalidArgumentError(None, None, "Expected value to be at least a vector, "
                                          "but received shape: []")
    total = int(lengths.sum())
    if total != np.shape(value)[0]:
        raise errors.InvalidArgumentError(
            None, None, f"Expected sum of lengths to be equal to values.shape[0], but sum of "
            f"lengths is {total} and value's shape is: "
            f"[{','.join(str(d) for d in np.shape(value))}] ")
    n = len(lengths)
    size = int(buf.size) if tab.is_static(buf.size) else buf.capacity
    if not (buf.dynamic and size < n) and size != n:
        raise errors.InvalidArgumentError(
            None, None, f"TensorArray's size is not equal to the size of lengths ({size} vs. "
            f"{n}), and the TensorArray is not marked as dynamically resizeable")
    _check_dtype(buf, T, "is trying to write")
    if n and len(set(lengths.tolist())) > 1:
        raise errors.UnimplementedError(
            None, None, "TensorArray split into pieces of different lengths is not supported: "
            "a compiled TensorArray holds elements of one shape.")
    rows = int(lengths[0]) if n else 0
    pieces = value.reshape((n, rows) + tuple(np.shape(value)[1:]))
    return tab.write_many(buf, np.arange(n, dtype=np.int32), pieces)


register(OpDef("TensorArraySplitV3", inputs=("handle: resource", "value: T", "lengths: int64")
               + _FLOW, outputs=("flow_out: float",), attrs={"T": _dtypes.ALL},
               shape=_split_shape, lower=_lower_split))


def _lower_size(handle, flow_in):
    return _buffer(flow_in).size


register(OpDef("TensorArraySizeV3", inputs=("handle: resource",) + _FLOW,
               outputs=("size: int32",), shape=lambda op: _SCALAR, lower=_lower_size,
               not_differentiable=True, host_outside_bodies=True))
register(OpDef("TensorArrayCloseV3", inputs=("handle: resource",), outputs=(),
               lower=lambda handle: (), stateful=True, not_differentiable=True))


# -- the Python class ---------------------------------------------------------------------

class _Info:
    """What every TensorArray built on one handle shares (TF1 shares these between a
    TensorArray and the ones its writes return): static facts and the element shape."""

    def __init__(self, handle, dtype, size, dynamic_size, infer_shape, element_shape,
                 colocate_with_first_write_call):
        self.handle = handle
        self.dtype = dtype
        self.size = size
        self.dynamic_size = dynamic_size
        self.infer_shape = infer_shape
        self.element_shape = [element_shape]
        self.colocate_with_first_write_call = colocate_with_first_write_call
        self.colocate_with = [] if colocate_with_first_write_call else None


@jax.tree_util.register_pytree_node_class
class TensorArray:
    """Class wrapping dynamic-sized, per-time-step, write-once Tensor arrays.

    Use with `tf.while_loop` (pass it as a loop variable; every write returns a new
    TensorArray to use from then on) and `tf.cond`; gradients flow through its values.
    """

    _is_tensor_array = True  # control_flow_ops recognizes loops carrying arrays by this

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        if handle is not None and tensor_array_name:
            raise ValueError("Cannot construct with both handle and tensor_array_name")
        if handle is not None and not isinstance(handle, Tensor):
            raise TypeError("Handle must be a Tensor")
        if handle is None and size is None:
            raise ValueError("Size must be provided if handle is not provided")
        if handle is not None and size is not None:
            raise ValueError("Cannot provide both a handle and size at the same time")
        if handle is not None and element_shape is not None:
            raise ValueError("Cannot provide both a handle and element_shape at the same time")
        if handle is not None and dynamic_size is not None:
            raise ValueError("Cannot provide both a handle and dynamic_size at the same time")
        if handle is not None and clear_after_read is not None:
            raise ValueError("Cannot provide both a handle and clear_after_read at the same "
                             "time")
        dtype = _dtypes.as_dtype(dtype).base_dtype
        element_shape = tensor_shape.as_shape(element_shape) if element_shape is not None \
            else tensor_shape.unknown_shape()
        with _graph.name_scope(name, "TensorArray", [x for x in (handle, size, flow)
                                                      if isinstance(x, Tensor)]) as scope:
            if handle is not None:
                if flow is None:
                    raise ValueError("flow must not be None if handle is not None.")
                info = _Info(handle, dtype, None, False, infer_shape, element_shape,
                             colocate_with_first_write_call)
                creator = handle.op if handle.op.type == "TensorArrayV3" else None
                if creator is not None:  # a handle of a known array: its static facts
                    known = creator.get_attr("_ta_info")
                    info.dynamic_size = creator.get_attr("dynamic_size")
                    if known is not None:
                        info.element_shape = known.element_shape
                        info.size = known.size
            else:
                info = _Info(None, dtype, size, bool(dynamic_size), infer_shape, element_shape,
                             colocate_with_first_write_call)
                clear_after_read = True if clear_after_read is None else clear_after_read
                devices = contextlib.ExitStack()
                if colocate_with_first_write_call:
                    graph = _graph.get_default_graph()
                    devices.enter_context(graph.device(None))
                    devices.enter_context(graph.colocate_with(None, ignore_existing=True))
                with devices:
                    handle, flow = apply_op(
                        "TensorArrayV3", name=scope, size=size, dtype=dtype,
                        element_shape=element_shape, dynamic_size=bool(dynamic_size),
                        clear_after_read=bool(clear_after_read),
                        identical_element_shapes=bool(infer_shape),
                        tensor_array_name=tensor_array_name or "", _ta_info=info)
                info.handle = handle
        self._info, self._flow = info, flow

    @classmethod
    def _with_flow(cls, info, flow):
        ta = cls.__new__(cls)
        ta._info, ta._flow = info, flow
        return ta

    # The pytree view: while_loop and cond see a TensorArray as its flow.
    def tree_flatten(self):
        return (self._flow,), self._info

    @classmethod
    def tree_unflatten(cls, info, children):
        return cls._with_flow(info, children[0])

    # -- properties ----------------------------------------------------------------------
    @property
    def flow(self):
        """The flow `Tensor` forcing ops leading to this TensorArray state."""
        return self._flow

    @property
    def dtype(self):
        """The data type of this TensorArray."""
        return self._info.dtype

    @property
    def handle(self):
        """The reference to the TensorArray."""
        return self._info.handle

    @property
    def element_shape(self):
        """The `tf.TensorShape` of elements in this TensorArray."""
        return self._info.element_shape[0]

    @property
    def dynamic_size(self):
        """Python bool; if `True` the TensorArray can grow dynamically."""
        return self._info.dynamic_size

    @property
    def _infer_shape(self):
        return self._info.infer_shape

    @property
    def _type_spec(self):
        return TensorArraySpec(self.element_shape, self.dtype, self.dynamic_size,
                               self._infer_shape)

    def __repr__(self):
        return (f"<tf.TensorArray '{self.handle.op.name}' dtype={self.dtype.name} "
                f"element_shape={self.element_shape}>")

    # -- helpers -------------------------------------------------------------------------
    def _new(self, flow):
        return TensorArray._with_flow(self._info, flow)

    def _check_element_shape(self, shape):
        if not shape.is_compatible_with(self.element_shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected "
                             f"{self.element_shape} ")
        if self._info.infer_shape:
            self._info.element_shape[0] = self.element_shape.merge_with(shape)

    @contextlib.contextmanager
    def _maybe_colocate_with(self, value):
        if not self._info.colocate_with_first_write_call:
            yield
            return
        if not self._info.colocate_with:
            self._info.colocate_with.append(value)
        with _graph.get_default_graph().colocate_with(self._info.colocate_with[0]):
            yield

    def _value(self, value, name="value", dtype=None):
        value = convert_to_tensor(value, dtype=dtype, preferred_dtype=self.dtype, name=name)
        if value.dtype.base_dtype != self.dtype:
            from tensorflux._src.platform import tf_logging
            tf_logging.error(f"Error: Input value {value} has dtype {value.dtype}, but "
                             f"expected dtype {self.dtype}.  This leads to undefined "
                             f"behavior and will be an error in future versions of "
                             f"TensorFlow.")
        return value

    # -- TF1's methods -------------------------------------------------------------------
    def identity(self):
        """A TensorArray with the same content whose flow passes through an identity (so
        control dependencies around the call apply to later ops on it)."""
        return self._new(identity(self._flow))

    def grad(self, source, flow=None, name=None):
        """The gradient TensorArray of this one for the gradient computation `source`."""
        if flow is None:
            flow = self.flow
        with _graph.name_scope(name, "TensorArrayGrad", [self.handle]):
            with _graph.get_default_graph().colocate_with(self.handle):
                g_handle, g_flow = apply_op("TensorArrayGradV3", name=name, handle=self.handle,
                                            flow_in=flow, source=source)
                with _graph.control_dependencies([g_handle]):
                    g_flow = identity(g_flow, name="gradient_flow")
                info = _Info(g_handle, self.dtype, self._info.size, False,
                             self._info.infer_shape, self.element_shape, False)
                info.element_shape = self._info.element_shape
                return TensorArray._with_flow(info, g_flow)

    def read(self, index, name=None):
        """Read the value at location `index` in the TensorArray."""
        value = apply_op("TensorArrayReadV3", name=name, handle=self.handle, index=index,
                         flow_in=self._flow, dtype=self.dtype)
        if self._info.element_shape:
            value.set_shape(self.element_shape.dims)
        return value

    def write(self, index, value, name=None):
        """Write `value` into index `index`; returns the TensorArray to use from now on."""
        with _graph.name_scope(name, "TensorArrayWrite", [self.handle, index, value]):
            value = self._value(value)
            self._check_element_shape(value.shape)
            with self._maybe_colocate_with(value):
                flow_out = apply_op("TensorArrayWriteV3", name=name, handle=self.handle,
                                    index=index, value=value, flow_in=self._flow)
            return self._new(flow_out)

    def stack(self, name=None):
        """All the elements stacked into one tensor (each must have been written)."""
        with _graph.get_default_graph().colocate_with(self.handle):
            with _graph.name_scope(name, "TensorArrayStack", [self.handle]):
                value = self.gather(_range(0, self.size()), name=name)
                size = static_value(convert_to_tensor(self._info.size)) \
                    if self._info.size is not None and not self.dynamic_size else None
                if self.element_shape and size is not None:
                    value.set_shape([int(size)] + self.element_shape.dims)
                return value

    def gather(self, indices, name=None):
        """The elements at `indices` (a vector), stacked."""
        value = apply_op("TensorArrayGatherV3", name=name, handle=self.handle,
                         indices=indices, flow_in=self._flow, dtype=self.dtype,
                         element_shape=self.element_shape)
        if self.element_shape:
            value.set_shape([None] + self.element_shape.dims)
        return value

    def concat(self, name=None):
        """All the elements concatenated along their first dimension."""
        except0 = self.element_shape[1:] if self.element_shape.ndims else \
            tensor_shape.unknown_shape()
        value, _ = apply_op("TensorArrayConcatV3", name=name, handle=self.handle,
                            flow_in=self._flow, dtype=self.dtype, element_shape_except0=except0)
        if self.element_shape:
            value.set_shape([None] + self.element_shape.dims[1:])
        return value

    def unstack(self, value, name=None):
        """Writes the slices of `value` along its first dimension as elements 0, 1, ..."""
        with _graph.name_scope(name, "TensorArrayUnstack", [self.handle, value]):
            num_elements = _shape(value)[0]
            return self.scatter(indices=_range(0, num_elements), value=value, name=name)

    def scatter(self, indices, value, name=None):
        """Writes value[k] as element indices[k]."""
        with _graph.name_scope(name, "TensorArrayScatter", [self.handle, value, indices]):
            value = self._value(value)
            if value.shape.ndims is not None and value.shape.ndims == 0:
                raise ValueError("Shape must be at least rank 1 but is rank 0")
            self._check_element_shape(value.shape[1:] if value.shape.ndims is not None
                                      else tensor_shape.unknown_shape())
            with self._maybe_colocate_with(value):
                flow_out = apply_op("TensorArrayScatterV3", name=name, handle=self.handle,
                                    indices=indices, value=value, flow_in=self._flow)
            return self._new(flow_out)

    def split(self, value, lengths, name=None):
        """Splits `value` along its first dimension into pieces of `lengths` rows."""
        with _graph.name_scope(name, "TensorArraySplit", [self.handle, value, lengths]):
            value = convert_to_tensor(value, dtype=self.dtype, name="value")
            with self._maybe_colocate_with(value):
                lengths_64 = cast(lengths, _dtypes.int64)
                known = static_value(lengths_64)
                if value.shape.ndims is not None and known is not None and known.ndim == 1 \
                        and known.size and known.max() == known.min():
                    self._check_element_shape(
                        tensor_shape.TensorShape([int(known[0])]).concatenate(value.shape[1:]))
                flow_out = apply_op("TensorArraySplitV3", name=name, handle=self.handle,
                                    value=value, lengths=lengths_64, flow_in=self._flow)
            return self._new(flow_out)

    def size(self, name=None):
        """The size of the TensorArray (a scalar int32 tensor)."""
        if not self.dynamic_size and self._info.size is not None:
            return convert_to_tensor(self._info.size, dtype=_dtypes.int32)
        return apply_op("TensorArraySizeV3", name=name, handle=self.handle,
                        flow_in=self._flow)

    def close(self, name=None):
        """Close the current TensorArray (an op to run; the array's value is unaffected)."""
        return apply_op("TensorArrayCloseV3", name=name, handle=self.handle)


# -- TensorArraySpec ------------------------------------------------------------------------

class TensorArraySpec(TypeSpec):
    """Type specification for a `tf.TensorArray`."""

    __slots__ = ("_element_shape", "_dtype", "_dynamic_size", "_infer_shape")

    def __init__(self, element_shape=None, dtype=_dtypes.float32, dynamic_size=False,
                 infer_shape=True):
        self._element_shape = tensor_shape.as_shape(element_shape) \
            if element_shape is not None else tensor_shape.unknown_shape()
        self._dtype = _dtypes.as_dtype(dtype)
        self._dynamic_size = dynamic_size
        self._infer_shape = infer_shape

    @property
    def value_type(self):
        return TensorArray

    def is_compatible_with(self, other):
        if not isinstance(other, TypeSpec):
            other = type_spec_from_value(other)
        # As in TF, infer_shape does not count.
        return (isinstance(other, TensorArraySpec)
                and self._dtype.is_compatible_with(other._dtype)
                and self._element_shape.is_compatible_with(other._element_shape)
                and self._dynamic_size == other._dynamic_size)

    def most_specific_compatible_type(self, other):
        if not self.is_compatible_with(other):
            raise ValueError("Types are not compatible")
        return TensorArraySpec(
            self._element_shape.most_specific_compatible_shape(other._element_shape),
            self._dtype, self._dynamic_size, self._infer_shape and other._infer_shape)

    def _serialize(self):
        return (self._element_shape, self._dtype, self._dynamic_size, self._infer_shape)

    @property
    def _component_specs(self):
        return [TensorSpec([], _dtypes.variant)]

    @staticmethod
    def from_value(value):
        if not isinstance(value, TensorArray):
            raise TypeError(f"Expected value to be a TensorArray, but saw: {type(value)}")
        return TensorArraySpec(dtype=value.dtype, element_shape=value.element_shape,
                               dynamic_size=value.dynamic_size, infer_shape=value._infer_shape)

    def _to_legacy_output_types(self):
        return self._dtype

    def _to_legacy_output_shapes(self):
        # TF sneaks dynamic_size and infer_shape into the legacy shape.
        flags = tensor_shape.TensorShape([int(self._dynamic_size), int(self._infer_shape)])
        return flags.concatenate(self._element_shape)

    def _to_legacy_output_classes(self):
        return TensorArray

    def _key(self):
        shape = self._element_shape
        return (None if shape.ndims is None else tuple(shape.as_list()), self._dtype,
                self._dynamic_size, self._infer_shape)

    def __eq__(self, other):
        return type(other) is type(self) and self._key() == other._key()

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((type(self),) + self._key())

    def __repr__(self):
        return (f"TensorArraySpec(element_shape={self._element_shape}, dtype={self._dtype!r}, "
                f"dynamic_size={self._dynamic_size}, infer_shape={self._infer_shape})")


# -- gradients (TF1's tensor_array_grad.py) ---------------------------------------------

def _grad_source(tensor):
    """The gradient computation a gradient tensor belongs to: its name up to the last
    component starting with "gradients" (several tf.gradients calls get their own
    gradient arrays in TF)."""
    tokens = tensor.name.split("/")
    positions = [i for i, t in enumerate(tokens) if t.startswith("gradients")]
    if not positions:
        raise ValueError(f"Expected op/tensor name to start with gradients (excluding "
                         f"scope), got: {tensor.name}")
    return "/".join(tokens[:positions[-1] + 1])


def _grad_array(op, dtype_attr, flow, grad):
    """The gradient TensorArray of `op`'s array (dtype from attr `dtype_attr`) for the
    gradient computation `grad` belongs to."""
    forward = TensorArray(dtype=op.get_attr(dtype_attr), handle=op.inputs[0], flow=flow,
                          colocate_with_first_write_call=False)
    return forward.grad(source=_grad_source(grad), flow=flow)


def _writer_grad_array(op, flow):
    """For the writing ops: the incoming gradient flow, ordered after the forward write
    (TF's write_barrier), and the gradient array read through it."""
    flow_out = identity(op.outputs[0], "flow_out")
    with _graph.control_dependencies([flow_out]):
        flow = identity(flow, "write_barrier")
    return _grad_array(op, "T", flow, flow), flow


@register_gradient("TensorArrayReadV3")
def _read_grad(op, grad):
    g = _grad_array(op, "dtype", op.inputs[2], grad)
    return [None, None, g.write(op.inputs[1], grad).flow]


@register_gradient("TensorArrayWriteV3")
def _write_grad(op, flow):
    g, flow = _writer_grad_array(op, flow)
    return [None, None, g.read(op.inputs[1]), flow]


@register_gradient("TensorArrayGatherV3")
def _gather_grad(op, grad):
    g = _grad_array(op, "dtype", op.inputs[2], grad)
    return [None, None, g.scatter(op.inputs[1], grad).flow]


@register_gradient("TensorArrayScatterV3")
def _scatter_grad(op, flow):
    g, flow = _writer_grad_array(op, flow)
    return [None, None, g.gather(op.inputs[1]), flow]


@register_gradient("TensorArrayConcatV3")
def _concat_grad(op, grad, unused_lengths_grad):
    g = _grad_array(op, "dtype", op.inputs[1], grad)
    return [None, g.split(grad, lengths=op.outputs[1]).flow]


@register_gradient("TensorArraySplitV3")
def _split_grad(op, flow):
    g, flow = _writer_grad_array(op, flow)
    return [None, g.concat(), None, flow]
