"""extract_image_patches (tf.image.extract_patches) and extract_volume_patches: every
window of a convolution, its values stacked in the depth dimension.

The output's last dimension holds a window's elements in (row, col[, plane], channel)
order, channel fastest, as TF's kernels write them. SAME pads as TF's kernels do
(`window_utils.window_pads`), with zeros. The gradient is TF's: patches of an index
image tell which input element each output element copies, and an unsorted segment sum
of the output gradient over those indices gives the input gradient.
"""

from __future__ import annotations

import itertools

import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.math.segment_ops import unsorted_segment_sum
from tensorflux._src.ops.nn.window_utils import ATTR_RULES, apply_checked, window_pads
from tensorflux._src.ops.op_helpers import deprecated_argument_lookup, with_rank
from tensorflux._src.ops.registry import OpDef, REQUIRED, register

__all__ = ["extract_image_patches", "extract_volume_patches"]

_IMAGE_TYPES = _dtypes.REAL + _dtypes.COMPLEX + (_dtypes.bool,)
_PADDINGS = ("SAME", "VALID")


def _patches_shape(op, n, rates):
    name = op.type
    x = with_rank(op.inputs[0].shape, n + 2)
    attrs = {"ksizes": op.get_attr("ksizes"), "stride": op.get_attr("strides")}
    if rates:
        attrs["rates"] = op.get_attr("rates")
    for attr, values in attrs.items():
        if len(values) != n + 2:
            raise ValueError(f"{name} requires the {attr} attribute to contain {n + 2} "
                             f"values, but got: {len(values)}")
    ks, strides = attrs["ksizes"][1:-1], attrs["stride"][1:-1]
    rs = attrs["rates"][1:-1] if rates else [1] * n
    dims = x.as_list()
    depth = None if dims[-1] is None else dims[-1] * int(np.prod(ks))
    spatial = dims[1:-1]
    if any(d is None for d in spatial):
        return TensorShape([dims[0]] + [None] * n + [depth])
    out = []
    for size, k, r, s in zip(spatial, ks, rs, strides):
        try:
            out.append(window_pads(size, k, r, s, op.get_attr("padding"))[2])
        except errors.InvalidArgumentError as e:
            raise ValueError(e.message) from None
    return TensorShape([dims[0]] + out + [depth])


def _check_attr_vec(values, attr, n):
    if values[0] != 1 or values[-1] != 1:
        raise errors.UnimplementedError(None, None, f"Only support{attr}across space.")
    if any(v < 1 for v in values[1:-1]):
        raise errors.OutOfRangeError(None, None, f"{attr}is out of range.")


def extract_windows(x, ks, strides, rates, padding):
    """[b, s1..sn, c] -> [b, o1..on, prod(ks) * c] (the kernels' element order)."""
    pads, outs = [], []
    for size, k, r, s in zip(x.shape[1:-1], ks, rates, strides):
        lo, hi, out = window_pads(size, k, r, s, padding)
        pads.append((lo, hi))
        outs.append(out)
    n_window = int(np.prod(ks))
    if 0 in outs or x.shape[0] == 0:
        return jnp.zeros((x.shape[0], *outs, n_window * x.shape[-1]), x.dtype)
    x = jnp.pad(jnp.asarray(x), [(0, 0)] + pads + [(0, 0)])
    pieces = []
    for offsets in itertools.product(*[range(k) for k in ks]):
        index = tuple(slice(o * r, o * r + (n - 1) * s + 1, s)
                      for o, r, n, s in zip(offsets, rates, outs, strides))
        pieces.append(x[(slice(None),) + index])
    stacked = jnp.stack(pieces, axis=-2)  # [b, o..., window, c]
    return jnp.reshape(stacked, (x.shape[0], *outs, n_window * x.shape[-1]))


def _image_lower(images, ksizes, strides, rates, padding):
    for attr, values in (("ksizes", ksizes), ("strides", strides), ("rates", rates)):
        _check_attr_vec(values, attr, 2)
    return extract_windows(images, ksizes[1:3], strides[1:3], rates[1:3], padding)


def _volume_lower(input, ksizes, strides, padding):  # noqa: A002
    for attr, values in (("ksizes", ksizes), ("strides", strides)):
        _check_attr_vec(values, attr, 3)
    return extract_windows(input, ksizes[1:4], strides[1:4], [1, 1, 1], padding)


def _patches_grad(op, grad):
    """TF's rule: patch an image of 1-based input positions the same way; each output
    element's gradient goes to the input element whose position it holds (0: padding)."""
    x = op.inputs[0]
    n = len(op.get_attr("ksizes")) - 2
    ks = op.get_attr("ksizes")[1:-1]
    in_shape = array_ops.shape(x)
    batch, spatial, channels = in_shape[0], in_shape[1:n + 1], in_shape[n + 1]
    count = reduce_ops.reduce_prod(spatial)
    positions = array_ops.reshape(math_ops.range(1, count + 1),
                                  array_ops.concat([[1], spatial, [1]], 0))
    attrs = {k: op.get_attr(k) for k in ("ksizes", "strides", "padding")}
    if op.type == "ExtractImagePatches":
        attrs["rates"] = op.get_attr("rates")
    patched = apply_checked(op.type, **{"images" if n == 2 else "input": positions}, **attrs)
    outs = array_ops.shape(op.outputs[0])[1:n + 1]
    expanded = array_ops.reshape(grad, array_ops.concat(
        [array_ops.reshape(batch, [1]), outs, np.array(ks, np.int32),
         array_ops.reshape(channels, [1])], 0))
    # (b, o..., k..., c) -> (o..., k..., b, c)
    perm = list(range(1, 2 * n + 1)) + [0, 2 * n + 1]
    flat = array_ops.reshape(array_ops.transpose(expanded, perm),
                             array_ops.stack([-1, batch * channels]))
    segments = array_ops.reshape(patched, [-1]) - 1  # padding (0) becomes -1: dropped
    summed = unsorted_segment_sum(flat, segments, count)
    summed = array_ops.reshape(summed, array_ops.concat(
        [spatial, array_ops.stack([batch, channels])], 0))
    return [array_ops.transpose(summed, [n] + list(range(n)) + [n + 1])]


register(OpDef(
    "ExtractImagePatches", inputs=("images: T",), outputs=("patches: T",),
    attrs={"T": _IMAGE_TYPES, "ksizes": REQUIRED, "strides": REQUIRED, "rates": REQUIRED,
           "padding": REQUIRED},
    shape=lambda op: _patches_shape(op, 2, rates=True), lower=_image_lower,
    grad=_patches_grad))
register(OpDef(
    "ExtractVolumePatches", inputs=("input: T",), outputs=("patches: T",),
    attrs={"T": _dtypes.REAL, "ksizes": REQUIRED, "strides": REQUIRED, "padding": REQUIRED},
    shape=lambda op: _patches_shape(op, 3, rates=False), lower=_volume_lower,
    grad=_patches_grad))
ATTR_RULES["ExtractImagePatches"] = {"ksizes": 4, "strides": 4, "rates": 4,
                                     "padding": _PADDINGS}
ATTR_RULES["ExtractVolumePatches"] = {"ksizes": 5, "strides": 5, "padding": _PADDINGS}


def _required(value, name, op_type):
    if value is None:
        raise TypeError(f"No argument for attr {name} of {op_type} Op.")
    return value


def extract_image_patches(images, ksizes=None, strides=None, rates=None, padding=None,
                          name=None, sizes=None):
    """Patches of `images` ([batch, rows, cols, depth]) as in a convolution with windows
    `ksizes`, `strides` and dilation `rates` (all [1, r, c, 1]), in the depth dimension."""
    ksizes = deprecated_argument_lookup("sizes", sizes, "ksizes", ksizes)
    op = "ExtractImagePatches"
    return apply_checked(op, name=name, images=images, ksizes=_required(ksizes, "ksizes", op),
                         strides=_required(strides, "strides", op),
                         rates=_required(rates, "rates", op),
                         padding=_required(padding, "padding", op))


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """tf.image.extract_patches: extract_image_patches with TF2's argument names."""
    return apply_checked("ExtractImagePatches", name=name, images=images, ksizes=sizes,
                         strides=strides, rates=rates, padding=padding)


def extract_volume_patches(input, ksizes, strides, padding, name=None):  # noqa: A002
    """Patches of a [batch, planes, rows, cols, depth] volume, in the depth dimension."""
    return apply_checked("ExtractVolumePatches", name=name, input=input, ksizes=ksizes,
                         strides=strides, padding=padding)
