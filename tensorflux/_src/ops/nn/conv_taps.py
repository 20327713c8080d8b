"""Window arithmetic shared by the convolutions written as per-tap slices
(depthwise_shifted.py, conv_im2col.py): the strided slice of the padded input each
filter tap meets, the padding of the backprop-input adjoint, and NHWC <-> NCHW.

A 2-D convolution with strides s, dilations d and pads (before, after) reads, for filter
tap t (per spatial axis), input rows t*d, t*d + s, ..., t*d + (out-1)*s of the padded
input. Its adjoint in the input is the same kind of window over the output gradient
interior-padded by s - 1 and padded by (k-1)*d - before in front (`adjoint_pads`), read
with stride 1 and the taps in reverse order.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax


def acc_dtype(dtype):
    """Half-precision values are accumulated in float32 (rounded once at the end)."""
    return jnp.float32 if jnp.dtype(dtype).itemsize < 4 else dtype


def to_nhwc(x, data_format):
    return jnp.transpose(x, (0, 2, 3, 1)) if data_format == "NCHW" else x


def from_nhwc(x, data_format):
    return jnp.transpose(x, (0, 3, 1, 2)) if data_format == "NCHW" else x


def to_nhwc_shape(shape, data_format):
    shape = tuple(shape)
    return (shape[0], shape[2], shape[3], shape[1]) if data_format == "NCHW" else shape


def taps(xp, kernel, out, strides, dilations):
    """(i, j, window) for each filter tap, row-major: the strided slice of `xp` (NHWC,
    already padded) that tap (i, j) multiplies."""
    n, _, _, c = xp.shape
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            start = (0, i * dilations[0], j * dilations[1], 0)
            limit = (n, start[1] + (out[0] - 1) * strides[0] + 1,
                     start[2] + (out[1] - 1) * strides[1] + 1, c)
            yield i, j, lax.slice(xp, start, limit, (1, strides[0], strides[1], 1))


def pad_spatial(x, pads, interior=(0, 0)):
    """Zero-pads the two spatial axes of NHWC `x` (negative pads crop)."""
    return lax.pad(x, jnp.zeros((), x.dtype),
                   [(0, 0, 0), (*pads[0], interior[0]), (*pads[1], interior[1])]
                   + [(0, 0, 0)] * (x.ndim - 3))


def adjoint_pads(in_hw, kernel, strides, dilations, pads, out_hw):
    """((low, high) per spatial axis, interior per axis) that turn an output gradient
    into the padded input of the backprop-input window (stride 1, taps reversed)."""
    edges, interior = [], []
    for size, k, s, d, (before, _), out in zip(in_hw, kernel, strides, dilations, pads,
                                               out_hw):
        low = (k - 1) * d - before
        edges.append((low, size + (k - 1) * d - low - ((out - 1) * s + 1)))
        interior.append(s - 1)
    return edges, interior
