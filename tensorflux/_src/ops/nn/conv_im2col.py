"""Conv2D and its two backprop ops as one matrix product each (im2col).

XLA:CPU runs a k x k convolution (k > 1) through Eigen's spatial convolution, and its
gradients through the same code on rearranged operands, which on this project's 2-core
AVX2 machine is much slower than its dot kernels on the same work. Written instead as a
dot, the taps' strided slices of the padded input are concatenated along channels into
"columns" (N, Ho, Wo, kh*kw*C) and multiplied by the filter seen as (kh*kw*C, O):

    forward:          y  = cols(x) @ w.reshape(kh*kw*C, O)
    backprop input:   dx = cols'(g) @ w'  (g = dy interior-padded by s - 1 and padded
                      by (k-1)*d - pad_before in front, read with stride 1; w' the filter
                      with its taps reversed and in/out swapped: (kh*kw*O, C))
    backprop filter:  dw = cols(x)^T @ dy, contracted over (N, Ho, Wo)

The columns cost kh*kw times the input's memory. A 1x1 filter's columns are the input
itself (strided), and its dx is dy @ w^T spread onto the input positions the forward
read. Half-precision products accumulate in float32. NCHW data is computed in NHWC.
The conv_defs.py lowerings call these for ungrouped 2-D convolutions when the
`tensorflux_conv2d_lowering` switch is "im2col" (conv_lowering.py).
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
    edges, interior = conv_taps.adjoint_pads((h, wd), (kh, kw), strides, dilations, pads,
                                             dy.shape[1:3])
    if kh == kw == 1:
        # dy @ w^T lands on the input positions the forward read (every s-th, shifted by
        # the padding), zeros elsewhere: multiply first, then spread out, rather than
        # multiplying s*s times as many zeros.
        _, ho, wo, _ = dy.shape
        dx = _matmul(dy.reshape(n * ho * wo, o), w.reshape(c, o), ((1,), (1,)), dy.dtype)
        dx = conv_taps.pad_spatial(dx.reshape(n, ho, wo, c), edges, interior)
        return conv_taps.from_nhwc(dx, data_format)
    gp = conv_taps.pad_spatial(dy, edges, interior)
    cols = _columns(gp, (kh, kw), (h, wd), (1, 1), dilations)
    # tap (i, j) of the columns meets filter tap (kh-1-i, kw-1-j), transposed to (O, C)
    flipped = jnp.transpose(w[::-1, ::-1], (0, 1, 3, 2)).reshape(kh * kw * o, c)
    dx = _matmul(cols.reshape(n * h * wd, kh * kw * o), flipped, ((1,), (0,)), dy.dtype)
    return conv_taps.from_nhwc(dx.reshape(n, h, wd, c), data_format)


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
