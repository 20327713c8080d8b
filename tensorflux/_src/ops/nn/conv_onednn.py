"""Conv2D and its two backprop ops through oneDNN (native/onednn.py), the "onednn"
alternative of the `tensorflux_conv2d_lowering` switch (conv_lowering.py).

Each op becomes one XLA FFI call that runs oneDNN's kernel on the operands in place, in
TF's layouts. The autotuner offers this alternative only where the kernel was built
(`available`), and an op takes it only when oneDNN has a fast kernel for its exact
shapes (`usable`): float32, ungrouped, and an implementation other than oneDNN's
reference or GEMM-based fallbacks (those are slower than XLA's convolution, and the
GEMM-based filter gradient of oneDNN 3.2 was seen to deadlock in nested OpenMP). Other
ops keep XLA's convolution. A layer's two backprop ops can also be one call,
`backprop_pair`, that runs them side by side where OpenMP has two threads (`pairs`;
conv_defs pairs them, through compiler/handoff.py).

Under JAX's own differentiation (a function body's gradient, compiler/functional.py)
each call differentiates as the XLA convolution it replaces (`jax.custom_vjp`), so
higher-order gradients stay exact.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tensorflux._src.native import onednn

FORWARD, BACKPROP_INPUT, BACKPROP_FILTER = 0, 1, 2
# oneDNN implementations kept: anything but its reference loops and GEMM-based ones.
_SLOW_IMPLEMENTATIONS = ("ref", "gemm")


def available() -> bool:
    return onednn.available()


def pairs() -> bool:
    """Whether a layer's dx and dw are best computed in one call (`backprop_pair`): where
    the kernel runs the two side by side (native/onednn.py)."""
    return available() and onednn.pairs()


def _spec(x_shape, w_shape, strides, dilations, pads, out, data_format):
    """The hashable description of one convolution: (nchw, x, w, y, strides, dilations,
    pad_l, pad_r) with x and y as N,H,W,C."""
    nchw = int(data_format == "NCHW")
    x = tuple(int(d) for d in x_shape)
    if nchw:
        x = (x[0], x[2], x[3], x[1])
    y = (x[0], int(out[0]), int(out[1]), int(w_shape[3]))
    return (nchw, x, tuple(int(d) for d in w_shape), y, tuple(strides), tuple(dilations),
            tuple(p[0] for p in pads), tuple(p[1] for p in pads))


@functools.cache
def _has_fast_kernel(kind, spec):
    ok, implementation = onednn.plan(kind, *spec)
    return ok and not any(slow in implementation for slow in _SLOW_IMPLEMENTATIONS)


def usable(kind, x_shape, w_shape, dtype, strides, dilations, pads, out, data_format):
    """Whether op `kind` with these static shapes runs through oneDNN."""
    if (jnp.dtype(dtype) != jnp.float32 or len(x_shape) != 4 or len(w_shape) != 4
            or not available()):
        return False
    spec = _spec(x_shape, w_shape, strides, dilations, pads, out, data_format)
    if 0 in spec[1] or 0 in spec[2] or 0 in spec[3] or spec[1][3] != spec[2][2]:
        return False  # empty, or grouped (input depth != filter depth)
    return _has_fast_kernel(kind, spec)


def _layout(shape_nhwc, nchw):
    n, h, w, c = shape_nhwc
    return (n, c, h, w) if nchw else shape_nhwc


def _reference_conv(spec):
    """XLA's convolution for `spec`: x, w -> y."""
    nchw, _, _, _, strides, dilations, pad_l, pad_r = spec
    layout = ("NCHW", "HWIO", "NCHW") if nchw else ("NHWC", "HWIO", "NHWC")
    return lambda x, w: lax.conv_general_dilated(
        x, w, window_strides=strides, padding=list(zip(pad_l, pad_r)),
        rhs_dilation=dilations, dimension_numbers=layout)


def _reference(kind, spec):
    """What the FFI call computes, in XLA (its operands as the call's)."""
    conv = _reference_conv(spec)
    if kind == FORWARD:
        return conv
    nchw, x_shape, w_shape = spec[0], spec[1], spec[2]
    if kind == BACKPROP_INPUT:
        x_spec = jax.ShapeDtypeStruct(_layout(x_shape, nchw), jnp.float32)
        return lambda w, dy: jax.linear_transpose(lambda x: conv(x, w), x_spec)(dy)[0]
    w_spec = jax.ShapeDtypeStruct(w_shape, jnp.float32)
    return lambda x, dy: jax.linear_transpose(lambda w: conv(x, w), w_spec)(dy)[0]


def _attrs(spec):
    """The FFI call's attributes for `spec` (the convolution's window and layout)."""
    nchw, _, _, _, strides, dilations, pad_l, pad_r = spec
    return {"nchw": np.int64(nchw),
            **{name: np.asarray(value, np.int64) for name, value in
               (("strides", strides), ("dilations", dilations), ("pad_l", pad_l),
                ("pad_r", pad_r))}}


def _ffi_call(target, results):
    """jax's FFI call of `target`, the kernel built and registered first."""
    if not available():
        raise RuntimeError(f"oneDNN's convolution kernel is unavailable: "
                           f"{onednn.unavailable_reason()}")
    return jax.ffi.ffi_call(target, results, vmap_method="sequential")


def _differentiable(fn, reference):
    """`fn` (an FFI call), differentiable as `reference`, the XLA computation it
    replaces, so higher-order gradients stay exact."""
    @jax.custom_vjp
    def call(*operands):
        return fn(*operands)

    def call_fwd(*operands):
        return call(*operands), operands

    def call_bwd(operands, g):
        return jax.vjp(reference, *operands)[1](g)

    call.defvjp(call_fwd, call_bwd)
    return call


@functools.cache
def _call(kind, spec):
    """The FFI call for (kind, spec) as a function of its two operands."""
    nchw, x_shape, w_shape, y_shape = spec[:4]
    out_shape = {FORWARD: _layout(y_shape, nchw), BACKPROP_INPUT: _layout(x_shape, nchw),
                 BACKPROP_FILTER: w_shape}[kind]
    ffi = _ffi_call(onednn.TARGET, jax.ShapeDtypeStruct(out_shape, jnp.float32))
    attrs = {"kind": np.int64(kind), **_attrs(spec)}
    return _differentiable(lambda a, b: ffi(a, b, **attrs), _reference(kind, spec))


@functools.cache
def _pair_call(spec):
    """The paired FFI call for `spec`: (w, dy, x) -> (dx, dw)."""
    nchw, x_shape, w_shape = spec[:3]
    ffi = _ffi_call(onednn.PAIR_TARGET,
                    (jax.ShapeDtypeStruct(_layout(x_shape, nchw), jnp.float32),
                     jax.ShapeDtypeStruct(w_shape, jnp.float32)))
    attrs = _attrs(spec)
    dx, dw = _reference(BACKPROP_INPUT, spec), _reference(BACKPROP_FILTER, spec)
    return _differentiable(lambda w, dy, x: ffi(w, dy, x, **attrs),
                           lambda w, dy, x: (dx(w, dy), dw(x, dy)))


def forward(x, w, strides, dilations, pads, out, data_format):
    """y = conv2d(x, w); arguments as conv_im2col.forward's."""
    return _call(FORWARD, _spec(x.shape, w.shape, strides, dilations, pads, out,
                                data_format))(x, w)


def backprop_input(x_shape, w, dy, strides, dilations, pads, out, data_format):
    """dx of forward() at input shape `x_shape` (in `data_format`)."""
    return _call(BACKPROP_INPUT, _spec(x_shape, w.shape, strides, dilations, pads, out,
                                       data_format))(w, dy)


def backprop_filter(x, w_shape, dy, strides, dilations, pads, out, data_format):
    """dw of forward() at filter shape `w_shape` [kh, kw, C, O]."""
    return _call(BACKPROP_FILTER, _spec(x.shape, w_shape, strides, dilations, pads, out,
                                        data_format))(x, dy)


def backprop_pair(x, w, dy, strides, dilations, pads, out, data_format):
    """(dx, dw) of forward() at input `x` and filter `w`, in one call that runs the two
    kernels side by side (onednn_conv.cc, ConvPair). Both must be `usable`."""
    return _pair_call(_spec(x.shape, w.shape, strides, dilations, pads, out,
                            data_format))(w, dy, x)

