"""Depthwise convolution and its two backprop ops as sums of shifted multiply-adds.

XLA:CPU has no depthwise kernel: its grouped convolution with one group per channel is
expanded into a dense convolution with a block-diagonal filter (C times the work),
and the filter gradient (a batch-grouped convolution) likewise. Written instead as
kh * kw strided slices of the padded input, each times one tap of the filter, summed,
the whole convolution is elementwise work that XLA fuses into one loop, and so are its
backprops written the same way (not derived by transposition, which would materialize
one padded copy per tap):

    forward:          y[n, o, c*M+m] = sum_t xpad[n, o*s + t*d, c] * w[t, c, m]
    backprop input:   dx[n, h, c] = sum_t gpad[n, h + t*d, c, m] * w[k-1-t, c, m]
                      (g = dy, interior-padded by s - 1 and padded by (k-1)*d - pad_before
                      in front: the adjoint of the strided window)
    backprop filter:  dw[t, c, m] = sum_{n, o} xpad[n, o*s + t*d, c] * dy[n, o, c*M+m]

(t runs over the 2-D taps, o over output positions). Half-precision inputs are
accumulated in float32 and rounded once, as TF's kernels do. NCHW data is computed in
NHWC (XLA fuses the transposes into the loops). The conv_defs.py lowerings call these
when the `tensorflux_depthwise_lowering` switch is "shifted" (conv_lowering.py).
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from tensorflux._src.ops.nn.conv_taps import acc_dtype as _acc_dtype
from tensorflux._src.ops.nn.conv_taps import adjoint_pads
from tensorflux._src.ops.nn.conv_taps import from_nhwc as _from_nhwc
from tensorflux._src.ops.nn.conv_taps import pad_spatial as _pad
from tensorflux._src.ops.nn.conv_taps import taps as _taps
from tensorflux._src.ops.nn.conv_taps import to_nhwc as _to_nhwc
from tensorflux._src.ops.nn.conv_taps import to_nhwc_shape as _to_nhwc_shape


def forward(x, w, strides, dilations, pads, out, data_format):
    """y = depthwise_conv2d(x, w); `strides`/`dilations` are the (h, w) values, `pads`
    ((before, after) per spatial axis) and `out` (Ho, Wo) the window_pads ones."""
    x = _to_nhwc(x, data_format)
    acc = _acc_dtype(x.dtype)
    kh, kw, c, m = w.shape
    wa = w.astype(acc)
    total = None
    for i, j, window in _taps(_pad(x, pads), (kh, kw), out, strides, dilations):
        window = window.astype(acc)
        if m == 1:
            term = window * wa[i, j, :, 0]
        else:
            term = (window[..., None] * wa[i, j]).reshape(window.shape[:3] + (c * m,))
        total = term if total is None else total + term
    return _from_nhwc(total.astype(x.dtype), data_format)


def backprop_input(x_shape, w, dy, strides, dilations, pads, data_format):
    """dx of forward() at input shape `x_shape` (in `data_format`)."""
    dy = _to_nhwc(dy, data_format)
    n, h, wd, c = _to_nhwc_shape(x_shape, data_format)
    kh, kw, _, m = w.shape
    acc = _acc_dtype(dy.dtype)
    # Channel multiplier 1 keeps 4-D arrays: a trailing axis of 1 would be the minor
    # (vectorized) dimension of every fused loop.
    g = dy.astype(acc) if m == 1 else dy.astype(acc).reshape(dy.shape[:3] + (c, m))
    edges, interior = adjoint_pads((h, wd), (kh, kw), strides, dilations, pads, dy.shape[1:3])
    gp = _pad(g, edges, interior)
    wa = w.astype(acc)
    total = None
    for i in range(kh):
        for j in range(kw):
            start = (0, i * dilations[0], j * dilations[1]) + (0,) * (g.ndim - 3)
            window = lax.slice(gp, start, (n, start[1] + h, start[2] + wd) + g.shape[3:])
            tap = wa[kh - 1 - i, kw - 1 - j]
            term = window * tap[:, 0] if m == 1 else (window * tap).sum(-1)
            total = term if total is None else total + term
    return _from_nhwc(total.astype(dy.dtype), data_format)


def backprop_filter(x, w_shape, dy, strides, dilations, pads, data_format):
    """dw of forward() at filter shape `w_shape` [kh, kw, C, M]."""
    x, dy = _to_nhwc(x, data_format), _to_nhwc(dy, data_format)
    kh, kw, c, m = w_shape
    acc = _acc_dtype(x.dtype)
    g = dy.astype(acc) if m == 1 else dy.astype(acc).reshape(dy.shape[:3] + (c, m))
    taps = []
    for _, _, window in _taps(_pad(x, pads), (kh, kw), dy.shape[1:3], strides, dilations):
        window = window.astype(acc)
        product = window * g if m == 1 else window[..., None] * g
        taps.append(jnp.sum(_fold_rows(product), axis=(0, 1, 2)))
    return jnp.stack(taps).reshape(w_shape).astype(x.dtype)


ROW_FOLD = 16  # at most this many output rows are added elementwise before reducing


def _fold_rows(product):
    """`product` (N, Ho, Wo, ...) with its rows added in groups of r (the largest divisor
    of Ho up to ROW_FOLD): (N, Ho / r, Wo, ...), the same sum over (N, Ho, Wo).

    A reduction is a kernel of its own on XLA:CPU (a library one by default), so a
    plain sum made XLA write each tap's strided window of the padded input out in full
    (recomputing what it was computed from, e.g. batch norm and ReLU6) to feed it:
    ~30% of MobileNet v2's kernel time. Folded, XLA computes each tap's product in r
    row-strided pieces fused with the window and the multiply, and the library
    reduction takes in the adds. Measured on MobileNet v2's training step (64x64, batch
    16): the window kernels 23 ms instead of 54 ms, the reductions 21 instead of 29 ms
    of kernel time, the step 0.82x the time in a same-process A/B."""
    rows = product.shape[1]
    r = max(d for d in range(1, min(rows, ROW_FOLD) + 1) if rows % d == 0)
    folded = product[:, 0::r]
    for k in range(1, r):
        folded = folded + product[:, k::r]
    return folded
