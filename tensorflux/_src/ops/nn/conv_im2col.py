"""Conv2D and its two backprop ops as one matrix product each (im2col).

XLA:CPU runs a k x k convolution (k > 1) through Eigen's spatial convolution, and its
gradients through the same code on rearranged operands, which on this project's 2-core
AVX2 machine is much slower than its dot kernels on the same work. Written instead as a
dot, the taps' strided slices of the padded input are concatenated along channels into
"columns" (N, Ho, Wo, kh*kw*C) and multiplied by the filter seen as (kh*kw*C, O):

    forward:          y  = cols(x) @ w.reshape(kh*kw*C, O)
    backprop input:   dx = spread(dy @ w.reshape(kh*kw*C, O)^T): each tap's (N, Ho, Wo, C)
                      share added onto the input positions that tap read
    backprop filter:  dw = cols(x)^T @ dy, contracted over (N, Ho, Wo)

The columns cost kh*kw times the input's memory, as do dx's per-tap shares. A 1x1
filter's columns are the input itself (strided). Half-precision products accumulate in
float32. NCHW data is computed in NHWC. The conv_defs.py lowerings call these for
ungrouped 2-D convolutions when the `tensorflux_conv2d_lowering` switch is "im2col"
(conv_lowering.py).
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from tensorflux._src.ops.nn import conv_taps


def _columns(xp, kernel, out, strides, dilations):
    windows = [w for _, _, w in conv_taps.taps(xp, kernel, out, strides, dilations)]
    return windows[0] if len(windows) == 1 else jnp.concatenate(windows, axis=-1)


def _matmul(a, b, contract, dtype):
    """The 2-D product of `a` and `b` contracting dimensions `contract` ((a's,), (b's,)),
    accumulated in float32 for half-precision inputs. Kept 2-D on purpose: XLA:CPU
    passes a 2-D operand whose contracted dimension is the major one to its dot kernels
    as transposed, where a 4-D operand contracted over (N, H, W) was first copied into a
    transposed layout (the copies cost as much as the dots in ResNet-50's step)."""
    out = lax.dot_general(a, b, (contract, ((), ())),
                          preferred_element_type=conv_taps.acc_dtype(dtype))
    return out.astype(dtype)


def forward(x, w, strides, dilations, pads, out, data_format):
    """y = conv2d(x, w) for w [kh, kw, C, O]; `strides`/`dilations` are the (h, w)
    values, `pads` ((before, after) per spatial axis) and `out` (Ho, Wo) window_pads'."""
    x = conv_taps.to_nhwc(x, data_format)
    kh, kw, _, o = w.shape
    cols = _columns(conv_taps.pad_spatial(x, pads), (kh, kw), out, strides, dilations)
    n, ho, wo, k = cols.shape
    y = _matmul(cols.reshape(n * ho * wo, k), w.reshape(k, o), ((1,), (0,)), x.dtype)
    return conv_taps.from_nhwc(y.reshape(n, ho, wo, o), data_format)


def backprop_input(x_shape, w, dy, strides, dilations, pads, data_format):
    """dx of forward() at input shape `x_shape` (in `data_format`)."""
    dy = conv_taps.to_nhwc(dy, data_format)
    n, h, wd, c = conv_taps.to_nhwc_shape(x_shape, data_format)
    kh, kw, _, o = w.shape
    _, ho, wo, _ = dy.shape
    # Each tap's share of dx, dy @ w_tap^T for all taps in one product with the filter
    # as stored, (kh*kw*C, O) contracted over O, which XLA:CPU reads as a transposed
    # operand in place. The other way round (the columns of dy, interior-padded for
    # strides, times the filter's taps reversed and transposed to (kh*kw*O, C)) copied
    # the whole filter every step, 4 ms for a 3x3 512->512 filter, and multiplied the
    # s*s - 1 of every s*s rows that the interior padding made zeros.
    parts = _matmul(dy.reshape(n * ho * wo, o), w.reshape(kh * kw * c, o), ((1,), (1,)),
                    dy.dtype).reshape(n, ho, wo, kh * kw, c)
    # ...then each share lands on the input positions its tap read in the forward
    # (every s-th from t*d - pad_before; out of range: cropped), summed over taps.
    dx = None
    for t, (i, j) in enumerate((i, j) for i in range(kh) for j in range(kw)):
        edges = []
        for tap, d, s, (before, _), size, out in zip((i, j), dilations, strides, pads,
                                                     (h, wd), (ho, wo)):
            low = tap * d - before
            edges.append((low, size - low - ((out - 1) * s + 1)))
        share = conv_taps.pad_spatial(parts[:, :, :, t], edges,
                                      (strides[0] - 1, strides[1] - 1))
        dx = share if dx is None else dx + share
    return conv_taps.from_nhwc(dx, data_format)


def backprop_filter(x, w_shape, dy, strides, dilations, pads, data_format):
    """dw of forward() at filter shape `w_shape` [kh, kw, C, O]."""
    x, dy = conv_taps.to_nhwc(x, data_format), conv_taps.to_nhwc(dy, data_format)
    kh, kw, _, o = w_shape
    cols = _columns(conv_taps.pad_spatial(x, pads), (kh, kw), dy.shape[1:3], strides,
                    dilations)
    rows = cols.shape[0] * cols.shape[1] * cols.shape[2]
    dw = _matmul(cols.reshape(rows, cols.shape[3]), dy.reshape(rows, o), ((0,), (0,)),
                 x.dtype)
    return dw.reshape(w_shape)
