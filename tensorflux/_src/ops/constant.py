"""Graph sources: `Const`, `Placeholder`, `PlaceholderWithDefault`."""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.tensor_conversion import make_ndarray
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, REQUIRED, register

register(OpDef(
    "Const",
    outputs=("output: dtype",),
    attrs={"dtype": _dtypes.ALL, "value": REQUIRED},
    shape=lambda op: tensor_shape.TensorShape(op.get_attr("value").shape),
    # The value stays a numpy array while lowering, so anything computed only from
    # constants (shapes, axes, sizes) is folded and stays static for XLA.
    lower=lambda value: value,
    not_differentiable=True,
))


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """`tf.constant`: a tensor holding `value`, with TF1's dtype and shape rules."""
    array = make_ndarray(value, dtype=dtype, shape=shape, verify_shape=verify_shape)
    return apply_op("Const", name=name, value=array, dtype=_dtypes.as_dtype(array.dtype)
                    if dtype is None else _dtypes.as_dtype(dtype).base_dtype)


register(OpDef(
    "Placeholder",
    outputs=("output: dtype",),
    # resource: a dataset function captures a lookup table's handle through one;
    # variant: a dataset (tf.data.experimental.to_variant's value) may be fed.
    attrs={"dtype": _dtypes.ALL + (_dtypes.resource, _dtypes.variant),
           "shape": tensor_shape.unknown_shape()},
    shape=lambda op: op.get_attr("shape"),
    lower=None,  # must be fed; the run plan reports an unfed placeholder
    not_differentiable=True,
))


def placeholder(dtype, shape=None, name=None):
    """`tf.placeholder`: a tensor whose value must be fed at run time."""
    shape = tensor_shape.as_shape(shape) if shape is not None else tensor_shape.unknown_shape()
    return apply_op("Placeholder", name=name, dtype=_dtypes.as_dtype(dtype).base_dtype,
                    shape=shape)


def _placeholder_with_default_shape(op):
    declared = op.get_attr("shape")
    given = op.inputs[0].shape
    if not declared.is_compatible_with(given):
        raise ValueError(f"Shapes {given} and {declared} are incompatible: the default value "
                         f"does not fit the declared shape")
    return declared


register(OpDef(
    "PlaceholderWithDefault",
    inputs=("input: dtype",),
    outputs=("output: dtype",),
    attrs={"dtype": _dtypes.ALL, "shape": REQUIRED},
    shape=_placeholder_with_default_shape,
    lower=lambda input: input,
    grad=lambda op, dy: [dy],
))


def placeholder_with_default(input, shape, name=None):  # noqa: A002 - TF's argument name
    """`tf.placeholder_with_default`: a placeholder that runs `input` when not fed."""
    return apply_op("PlaceholderWithDefault", name=name, input=input,
                    shape=tensor_shape.as_shape(shape))
