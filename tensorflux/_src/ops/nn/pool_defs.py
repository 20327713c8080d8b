"""Pooling op records: MaxPool, AvgPool, MaxPool3D, AvgPool3D, MaxPoolWithArgmax and the
gradient ops TF has for them (MaxPoolGrad, MaxPoolGradGrad, AvgPoolGrad, the 3-D ones,
MaxPoolGradWithArgmax, MaxPoolGradGradWithArgmax).

Shape functions follow TF's MaxPoolShape / AvgPoolShape / Pool3DShape with their
messages. MaxPool (2-D) may also pool over the depth axis, as TF's does; AvgPool and the
3-D ops pass the depth through. The kernels' own checks (no pooling over the batch,
TF's depthwise max-pooling rules, a zero window) run in the lowerings, at run time.

Gradients follow TF1's nn_grad.py, each built from these ops so they differentiate
again: MaxPool -> MaxPoolGrad -> MaxPoolGradGrad -> MaxPoolGrad ..., with zeros for the
orig_input/orig_output inputs (the selection is piecewise constant); AvgPool ->
AvgPoolGrad -> AvgPool. The JAX lowerings (and the choice of lowering for the max-pool
gradient) are in pool_kernels.py.

TF's MaxPool3D kernels have no float64; here the 3-D max ops also take float64 (XLA has
it), so gradients can be checked in float64 like every other op's.
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array.array_ops import shape
from tensorflux._src.ops.array.generator_ops import zeros_like
from tensorflux._src.ops.nn import pool_kernels as _k
from tensorflux._src.ops.nn.window_utils import (ATTR_RULES, FORMATS_2D, FORMATS_3D, PADDINGS,
                                                 channel_axis, spatial_axes, windowed_output_dim)
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import merge_shapes, static_input, with_rank
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.ops.shape_fns import static_shape_from_tensor

_d = _dtypes
REAL = _d.REAL
F = _d.FLOATS


# -- shape functions ---------------------------------------------------------------------------
def _pool_shape(op, kind=None):
    """MaxPoolShape ("max"), AvgPoolShape ("avg") or Pool3DShape ("3d")."""
    kind = kind or _KIND[op.type]
    fmt = op.attrs.get("data_format", "NHWC")
    rank = len(fmt)
    x = with_rank(op.inputs[0].shape, rank)
    strides, ksize = op.get_attr("strides"), op.get_attr("ksize")
    if kind == "3d":
        if len(strides) != 5:
            raise ValueError(f"Pool3D ops require the stride attribute to contain 5 values, "
                             f"but got: {len(strides)}")
        if len(ksize) != 5:
            raise ValueError(f"Pool3D requires the ksize attribute to contain 5 values, but "
                             f"got: {len(ksize)}")
    else:
        label = "MaxPool" if kind == "max" else "AvgPool"
        if len(strides) != 4:
            raise ValueError(f"{label} requires the stride attribute to contain 4 values, but "
                             f"got: {len(strides)}")
        if len(ksize) != 4:
            raise ValueError(f"{label} requires the ksize attribute to contain 4 values, but "
                             f"got: {len(ksize)}")
    padding = op.get_attr("padding")
    pooled = spatial_axes(fmt, rank) + ([channel_axis(fmt, rank)] if kind == "max" else [])
    dims = [windowed_output_dim(x[a], ksize[a], 1, strides[a], padding) if a in pooled
            else x[a] for a in range(rank)] if x.ndims is not None else None
    return TensorShape(dims)


def _with_rank_of_input(rank):
    return lambda op: with_rank(op.inputs[0].shape, rank)


def _shape_from_tensor(rank):
    def shape_fn(op):
        with_rank(op.inputs[0].shape, 1)
        return with_rank(static_shape_from_tensor(op.inputs[0]), rank)
    return shape_fn


def _grad_grad_shape(op):
    """MaxPoolGradGrad & co: the pooled shape; checks orig_input ~ grad, orig_output ~ it."""
    out = _pool_shape(op)
    merge_shapes(op.inputs[0].shape, op.inputs[2].shape)
    merge_shapes(op.inputs[1].shape, out)
    return out


def _argmax_shape(op):
    out = _pool_shape(op, "max")
    return [out, out]


def _grad_grad_argmax_shape(op):
    out = _pool_shape(op, "max")
    merge_shapes(op.inputs[0].shape, op.inputs[1].shape)
    merge_shapes(op.inputs[2].shape, out)
    return out


# -- kernel checks (run time, TF's messages) ----------------------------------------------------
def _unimplemented(message):
    return errors.UnimplementedError(None, None, message)


def _check_kernel(kind, shape, ksize, strides, data_format):
    for i, k in enumerate(ksize):
        if k <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"Sliding window ksize for dimension {i} was zero.")
    if ksize[0] != 1 or strides[0] != 1:
        raise _unimplemented("Pooling is not yet supported on the batch dimension.")
    c = channel_axis(data_format, len(shape))
    depth_window, depth_stride = ksize[c], strides[c]
    if kind == "avg" and (depth_window != 1 or depth_stride != 1):
        raise _unimplemented("Non-spatial pooling is not yet supported. Volunteers? :)")
    if kind == "3d" and (depth_window != 1 or depth_stride != 1):
        raise _unimplemented("Pooling is not yet supported on the depth dimension.")
    if kind == "max" and depth_window != 1:
        if any(ksize[a] != 1 for a in spatial_axes(data_format, len(shape))):
            raise _unimplemented("MaxPooling supports exactly one of pooling across depth or "
                                 "pooling across width/height.")
        if shape[c] % depth_window:
            raise _unimplemented("Depthwise max pooling requires the depth window to evenly "
                                 "divide the input depth.")
        if depth_stride != depth_window:
            raise _unimplemented("Depthwise max pooling requires the depth window to equal "
                                 "the depth stride.")


def _sizes(value, label):
    return tuple(int(d) for d in static_input(value, label, "orig_input_shape").reshape(-1))


# -- lowerings -----------------------------------------------------------------------------------
def _lowering(kind, fn):
    """Wraps `fn(*inputs, ksize, strides, padding)` with the kernel checks for `kind`
    ("max", "avg" or "3d"). For "avg_shape" / "3d_shape" (AvgPoolGrad, AvgPool3DGrad)
    the first input is the input's shape: its static value is checked and passed on."""

    def lower(first, *rest, ksize, strides, padding, data_format=None):
        fmt = data_format or ("NDHWC" if len(ksize) == 5 else "NHWC")
        base, _, from_value = kind.partition("_")
        if from_value:
            first = _sizes(first, "AvgPool3DGrad" if base == "3d" else "AvgPoolGrad")
        _check_kernel(base, first if from_value else first.shape, ksize, strides, fmt)
        return fn(first, *rest, ksize=ksize, strides=strides, padding=padding)

    return lower


def _max_pool_grad(orig_input, orig_output, grad, ksize, strides, padding):
    return _k.max_pool_grad(orig_input, grad, ksize, strides, padding)


def _max_pool_grad_grad(orig_input, orig_output, grad, ksize, strides, padding):
    return _k.max_pool_grad_grad(orig_input, grad, ksize, strides, padding)


def _argmax_lower(input, ksize, strides, padding, include_batch_in_index,  # noqa: A002
                  Targmax):  # noqa: N803 - TF's attr name
    _check_kernel("max", input.shape, ksize, strides, "NHWC")
    return _k.max_pool_with_argmax(input, ksize, strides, padding, include_batch_in_index,
                                   Targmax.as_numpy_dtype)


def _grad_with_argmax_lower(input, grad, argmax, ksize, strides, padding,  # noqa: A002
                            include_batch_in_index):
    _check_kernel("max", input.shape, ksize, strides, "NHWC")
    return _k.max_pool_grad_with_argmax(input.shape, grad, argmax, include_batch_in_index)


def _grad_grad_with_argmax_lower(input, grad, argmax, ksize, strides, padding,  # noqa: A002
                                 include_batch_in_index):
    _check_kernel("max", input.shape, ksize, strides, "NHWC")
    return _k.max_pool_grad_grad_with_argmax(grad, argmax, include_batch_in_index)


# -- gradients (graph ops, as TF1's nn_grad.py) -----------------------------------------------
_POOL_ATTRS = ("ksize", "strides", "padding", "data_format", "include_batch_in_index")


def _attrs(op):
    return {k: op.get_attr(k) for k in _POOL_ATTRS if k in op.attrs}


def _zeros_like(t):
    return zeros_like(t)


def _shape(t):
    return shape(t)


def _max_family(grad_op, grad_grad_op):
    def pool_grad(op, dy):
        return [apply_op(grad_op, orig_input=op.inputs[0], orig_output=op.outputs[0], grad=dy,
                         **_attrs(op))]

    def grad_grad(op, dy):  # the gradient of grad_op
        x, y, _ = op.inputs
        return [_zeros_like(x), _zeros_like(y),
                apply_op(grad_grad_op, orig_input=x, orig_output=y, grad=dy, **_attrs(op))]

    def grad_grad_grad(op, dy):  # the gradient of grad_grad_op
        x, y, _ = op.inputs
        return [_zeros_like(x), _zeros_like(y),
                apply_op(grad_op, orig_input=x, orig_output=y, grad=dy, **_attrs(op))]

    return pool_grad, grad_grad, grad_grad_grad


def _avg_family(pool, grad_op):
    def pool_grad(op, dy):
        return [apply_op(grad_op, orig_input_shape=_shape(op.inputs[0]), grad=dy,
                         **_attrs(op))]

    def grad_grad(op, dy):  # the gradient of grad_op: pool the incoming gradient
        return [None, apply_op(pool, **{_POOL_INPUT[pool]: dy}, **_attrs(op))]

    return pool_grad, grad_grad


_POOL_INPUT = {"AvgPool": "value", "AvgPool3D": "input"}


def _argmax_grad(op, dy, _dargmax):
    return [apply_op("MaxPoolGradWithArgmax", input=op.inputs[0], grad=dy,
                     argmax=op.outputs[1], **_attrs(op))]


def _grad_with_argmax_grad(op, dy):
    x, _, argmax = op.inputs
    return [_zeros_like(x),
            apply_op("MaxPoolGradGradWithArgmax", input=x, grad=dy, argmax=argmax,
                     **_attrs(op)),
            None]


def _grad_grad_with_argmax_grad(op, dy):
    x, _, argmax = op.inputs
    return [_zeros_like(x),
            apply_op("MaxPoolGradWithArgmax", input=x, grad=dy, argmax=argmax, **_attrs(op)),
            None]


# -- records -------------------------------------------------------------------------------------
_KIND = {}


def _register(name, kind, inputs, shape, lower, grad, dtypes, rank=4, outputs=("output: T",),
              extra_attrs=None, data_format=True, type_defaults=None):
    _KIND[name] = kind
    formats = FORMATS_3D if rank == 5 else FORMATS_2D
    attrs = {"T": dtypes, "ksize": REQUIRED, "strides": REQUIRED, "padding": REQUIRED}
    rules = {"ksize": rank, "strides": rank, "padding": PADDINGS}
    if data_format:
        attrs["data_format"] = formats[0]
        rules["data_format"] = formats
    attrs.update(extra_attrs or {})
    if "include_batch_in_index" in attrs:
        rules["include_batch_in_index"] = bool
    ATTR_RULES[name] = rules
    register(OpDef(name, inputs=inputs, outputs=outputs, attrs=attrs, shape=shape,
                   lower=lower, grad=grad, type_defaults=type_defaults or {}))


_MAX_INPUTS = ("orig_input: T", "orig_output: T", "grad: T")
_max2d = _max_family("MaxPoolGrad", "MaxPoolGradGrad")
_max3d = _max_family("MaxPool3DGrad", "MaxPool3DGradGrad")
_avg2d = _avg_family("AvgPool", "AvgPoolGrad")
_avg3d = _avg_family("AvgPool3D", "AvgPool3DGrad")
_F32 = {"T": _d.float32}

_register("MaxPool", "max", ("input: T",), _pool_shape, _lowering("max", _k.max_pool),
          _max2d[0], REAL, type_defaults=_F32)
_register("MaxPoolGrad", "max", _MAX_INPUTS, _with_rank_of_input(4),
          _lowering("max", _max_pool_grad), _max2d[1], REAL, type_defaults=_F32)
_register("MaxPoolGradGrad", "max", _MAX_INPUTS, _grad_grad_shape,
          _lowering("max", _max_pool_grad_grad), _max2d[2], REAL)
_register("AvgPool", "avg", ("value: T",), _pool_shape, _lowering("avg", _k.avg_pool),
          _avg2d[0], F)
_register("AvgPoolGrad", "avg", ("orig_input_shape: int32", "grad: T"), _shape_from_tensor(4),
          _lowering("avg_shape", _k.avg_pool_grad), _avg2d[1], F)

_register("MaxPool3D", "3d", ("input: T",), _pool_shape, _lowering("3d", _k.max_pool),
          _max3d[0], F, rank=5)
_register("MaxPool3DGrad", "3d", ("orig_input: TInput", "orig_output: TInput", "grad: T"),
          _with_rank_of_input(5), _lowering("3d", _max_pool_grad), _max3d[1], F, rank=5,
          extra_attrs={"TInput": F}, type_defaults={"T": _d.float32, "TInput": _d.float32})
_register("MaxPool3DGradGrad", "3d", _MAX_INPUTS, _grad_grad_shape,
          _lowering("3d", _max_pool_grad_grad), _max3d[2], REAL, rank=5)
_register("AvgPool3D", "3d", ("input: T",), _pool_shape, _lowering("3d", _k.avg_pool),
          _avg3d[0], F, rank=5)
_register("AvgPool3DGrad", "3d", ("orig_input_shape: int32", "grad: T"), _shape_from_tensor(5),
          _lowering("3d_shape", _k.avg_pool_grad), _avg3d[1], F, rank=5)

_ARGMAX_ATTRS = {"Targmax": _d.INDEX, "include_batch_in_index": False}
_register("MaxPoolWithArgmax", "max", ("input: T",), _argmax_shape, _argmax_lower,
          _argmax_grad, REAL, outputs=("output: T", "argmax: Targmax"),
          extra_attrs=_ARGMAX_ATTRS, data_format=False, type_defaults={"Targmax": _d.int64})
_register("MaxPoolGradWithArgmax", "max", ("input: T", "grad: T", "argmax: Targmax"),
          _with_rank_of_input(4), _grad_with_argmax_lower, _grad_with_argmax_grad, REAL,
          extra_attrs=_ARGMAX_ATTRS, data_format=False)
_register("MaxPoolGradGradWithArgmax", "max", ("input: T", "grad: T", "argmax: Targmax"),
          _grad_grad_argmax_shape, _grad_grad_with_argmax_lower, _grad_grad_with_argmax_grad,
          REAL, extra_attrs=_ARGMAX_ATTRS, data_format=False)
