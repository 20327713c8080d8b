"""Fast Fourier transforms: TF's FFT / RFFT op records, their gradients and wrappers.

Op types and signatures are TF's: FFT, IFFT, FFT2D, IFFT2D, FFT3D, IFFT3D (complex64 or
complex128 in and out, over the inner 1-3 dims); RFFT, IRFFT, RFFT2D, IRFFT2D, RFFT3D,
IRFFT3D (`Treal` float32/float64 <-> `Tcomplex` complex64/complex128, with an int32
`fft_length` input); FFTND, IFFTND, RFFTND, IRFFTND (also an int32 `axes` input; TF's
kernel transforms only trailing, ascending axes and says so when given others).

`fft_length` follows TF's kernels: along each transformed axis the input is cropped when
longer and zero-padded when shorter (for the inverse real FFTs the innermost axis holds
`fft_length // 2 + 1` bins). TF's Python wrappers pad before the op and its kernels crop;
here the lowering does both, so the gradients below, which undo that crop or pad, are
exact for every `fft_length` (TF's RFFT/IRFFT gradients assume no crop). Output sizes
depend on `fft_length`, which XLA needs when compiling: it must be computable from
constants and shapes (a fed value is baked into the executable, one per value).

Gradients: TF's formulas for FFT/IFFT (size * ifft(dy), fft(dy) / size). For the real
transforms: RFFT's input gradient is Re(N * ifft(dy zero-extended to the full spectrum)),
IRFFT's is rfft(dy) / N with the non-DC, non-Nyquist bins doubled (the Hermitian mirror
images they stand for). TF registers none for RFFT3D/IRFFT3D and the ND ops; these
records have them all, with the same formulas.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.array import array_ops, generator_ops, slicing_ops
from tensorflux._src.ops.array.layout import roll
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (dims_str, kernel_error, static_input, with_rank,
                                            with_rank_at_least)
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import static_value

__all__ = ["fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "fftnd", "ifftnd", "rfftnd",
           "irfftnd"]

_REAL = (_dtypes.float32, _dtypes.float64)
_COMPLEX = _dtypes.COMPLEX
_COMPLEX_OF = {_dtypes.float32: _dtypes.complex64, _dtypes.float64: _dtypes.complex128}
_REAL_OF = {v: k for k, v in _COMPLEX_OF.items()}
_NAMES = {1: "", 2: "2D", 3: "3D"}


# -- lowering helpers -------------------------------------------------------------------------
def _check_rank(x, k):
    if x.ndim < k:
        raise kernel_error(f"Input must have rank of at least {k} but got: {dims_str(x.shape)}")


def _static_lengths(fft_length, op_type, k):
    n = np.asarray(static_input(fft_length, op_type, "fft_length"))
    if n.shape != (k,):
        got = n.shape[0] if n.ndim == 1 else n.size
        raise kernel_error(f"fft_length must have shape [{k}], but got: {got}.")
    for i, v in enumerate(n):
        if v < 0:
            raise kernel_error(f"fft_length[{i}] must >= 0, but got: {int(v)}")
    return tuple(int(v) for v in n)


def _real_out_dims(n, forward):
    """The transformed dims of a real FFT's output: the innermost keeps n // 2 + 1 bins."""
    dims = list(n)
    if forward and dims and dims[-1] != 0:
        dims[-1] = dims[-1] // 2 + 1
    return dims


def _check_pair(real, cplx, forward):
    # The Python wrappers always pair float32/complex64 and float64/complex128.
    if _COMPLEX_OF[real] != cplx:
        kind = "forward" if forward else "backward"
        pair = (real, cplx) if forward else (cplx, real)
        raise kernel_error(f"Wrong types for {kind} real FFT: in={pair[0].name} "
                           f"out={pair[1].name}")


def _transform(x, kind, n, axes, out_dtype):
    """np.fft semantics (crop or zero-pad to `n` along `axes`) of one of the four kinds."""
    if kind == "rfft":
        out = x.shape[:len(x.shape) - len(axes)] + tuple(_real_out_dims(n, True))
    else:
        out = x.shape[:len(x.shape) - len(axes)] + tuple(n)
    if x.size == 0 or 0 in n:  # TF passes empty tensors through
        return jnp.zeros(out, out_dtype)
    fn = {"fft": jnp.fft.fftn, "ifft": jnp.fft.ifftn, "rfft": jnp.fft.rfftn,
          "irfft": jnp.fft.irfftn}[kind]
    return fn(x, s=n, axes=axes).astype(out_dtype)


# -- FFT, IFFT, FFT2D, IFFT2D, FFT3D, IFFT3D -----------------------------------------------
def _complex_shape(k):
    return lambda op: with_rank_at_least(op.inputs[0].shape, k)


def _complex_lower(k, inverse):
    def lower(input):  # noqa: A002 - TF's input name
        _check_rank(input, k)
        axes = tuple(range(-k, 0))
        return _transform(input, "ifft" if inverse else "fft", input.shape[-k:], axes,
                          input.dtype)
    return lower


def _inner_size(t, k, dtype):
    """The number of elements in t's inner k dims, as a `dtype` scalar."""
    inner = t.shape[-k:] if t.shape.ndims is not None else None
    if inner is not None and inner.is_fully_defined():
        return convert_to_tensor(float(np.prod(inner.as_list())), dtype=dtype)
    return math_ops.cast(reduce_ops.reduce_prod(array_ops.shape(t)[-k:]), dtype)


def _complex_grad(k, inverse):
    # FFT: size * ifft(dy); IFFT: fft(dy) / size (TF's fft_ops.py formulas).
    def grad(op, dy):
        return [_complex_fft_grad(dy, k, inverse)]
    return grad


def _complex_fft_grad(dy, k, inverse):
    size = _inner_size(dy, k, dy.dtype.real_dtype)
    if not inverse:
        return _complex_fft(dy, k, inverse=True) * math_ops.cast(size, dy.dtype)
    return _complex_fft(dy, k, inverse=False) * math_ops.cast(1.0 / size, dy.dtype)


for _k in (1, 2, 3):
    for _inverse in (False, True):
        register(OpDef(
            ("IFFT" if _inverse else "FFT") + _NAMES[_k],
            inputs=("input: Tcomplex",), outputs=("output: Tcomplex",),
            attrs={"Tcomplex": _COMPLEX}, type_defaults={"Tcomplex": _dtypes.complex64},
            shape=_complex_shape(_k), lower=_complex_lower(_k, _inverse),
            grad=_complex_grad(_k, _inverse),
        ))


# -- RFFT, IRFFT, RFFT2D, IRFFT2D, RFFT3D, IRFFT3D -----------------------------------------
def _fft_length_shape(fft_length, k):
    shape = with_rank(fft_length.shape, 1)
    if shape[0].value is not None and shape[0].value != k:
        raise ValueError(f"Dimension must be {k} but is {shape[0].value}")


def _replace_inner(shape, n, k, forward):
    """`shape` with its inner k dims set from the static fft_length `n` (None: unknown)."""
    if shape.ndims is None:
        return unknown_shape()
    dims = shape.as_list()
    if n is None:
        inner = [None] * k
    else:
        inner = _real_out_dims([int(v) for v in np.reshape(n, -1)], forward)
    return TensorShape(dims[:len(dims) - k] + inner)


def _real_shape(k, forward):
    # TF's RFFTShape: rank >= k, fft_length a [k] vector; inner dims from its value.
    def shape(op):
        x_shape = with_rank_at_least(op.inputs[0].shape, k)
        _fft_length_shape(op.inputs[1], k)
        return _replace_inner(x_shape, static_value(op.inputs[1]), k, forward)
    return shape


def _real_lower(k, forward):
    op_type = ("RFFT" if forward else "IRFFT") + _NAMES[k]

    def lower(input, fft_length, Treal, Tcomplex):  # noqa: A002,N803 - TF's names
        _check_rank(input, k)
        n = _static_lengths(fft_length, op_type, k)
        _check_pair(Treal, Tcomplex, forward)
        out = Tcomplex if forward else Treal
        return _transform(input, "rfft" if forward else "irfft", n, tuple(range(-k, 0)),
                          out.as_numpy_dtype)
    return lower


def _real_grad(k, forward):
    def grad(op, dy):
        x, fft_length = op.inputs[0], op.inputs[1]
        if forward:
            return [_rfft_input_grad(x, fft_length, dy, k), None]
        return [_irfft_input_grad(x, fft_length, dy, k), None]
    return grad


_REAL_ATTRS = {"Treal": _REAL, "Tcomplex": _COMPLEX}
_REAL_DEFAULTS = {"Treal": _dtypes.float32, "Tcomplex": _dtypes.complex64}
for _k in (1, 2, 3):
    register(OpDef(
        "RFFT" + _NAMES[_k], inputs=("input: Treal", "fft_length: int32"),
        outputs=("output: Tcomplex",), attrs=dict(_REAL_ATTRS), type_defaults=_REAL_DEFAULTS,
        shape=_real_shape(_k, True), lower=_real_lower(_k, True), grad=_real_grad(_k, True),
    ))
    register(OpDef(
        "IRFFT" + _NAMES[_k], inputs=("input: Tcomplex", "fft_length: int32"),
        outputs=("output: Treal",), attrs=dict(_REAL_ATTRS), type_defaults=_REAL_DEFAULTS,
        shape=_real_shape(_k, False), lower=_real_lower(_k, False), grad=_real_grad(_k, False),
    ))


# -- FFTND, IFFTND, RFFTND, IRFFTND ---------------------------------------------------------
def _nd_shape(forward_real):
    def shape(op):
        x_shape = with_rank_at_least(op.inputs[0].shape, 1)
        fl = op.inputs[1]
        with_rank(fl.shape, 1)
        with_rank(op.inputs[2].shape, 1)
        n = static_value(fl)
        k = len(np.reshape(n, -1)) if n is not None else fl.shape[0].value
        if x_shape.ndims is None:
            return unknown_shape()
        if k is None or k > x_shape.ndims:  # the kernel rejects k > rank at run time
            return unknown_shape(x_shape.ndims)
        # TF's kernel writes the transformed sizes into the trailing k dims.
        return _replace_inner(x_shape, n, k, forward_real)
    return shape


def _nd_axes(x, axes):
    """TF's FFTNBase checks: trailing, successive, ascending axes, as non-negative ints."""
    ax = [int(a) for a in np.reshape(axes, -1)]
    r = x.ndim
    if r < len(ax):
        raise kernel_error(f"Input must have rank of at least {len(ax)} but got: "
                           f"{dims_str(x.shape)}")
    ax = [a + r if a < 0 else a for a in ax]
    for prev, cur in zip(ax, ax[1:]):
        if prev + 1 != cur:
            raise kernel_error("axes must be successive and ascending.")
    if not ax or ax[-1] != r - 1:
        raise kernel_error("The last axis to perform transform on must be -1.")
    return tuple(ax)


def _nd_lower(kind):
    op_type = kind.upper() + "ND"

    def check(input, fft_length, axes):  # noqa: A002
        ax = _nd_axes(input, static_input(axes, op_type, "axes"))
        return _static_lengths(fft_length, op_type, len(ax)), ax

    if kind in ("fft", "ifft"):
        def lower(input, fft_length, axes):  # noqa: A002
            n, ax = check(input, fft_length, axes)
            return _transform(input, kind, n, ax, input.dtype)
    else:
        def lower(input, fft_length, axes, Treal, Tcomplex):  # noqa: A002,N803
            n, ax = check(input, fft_length, axes)
            _check_pair(Treal, Tcomplex, kind == "rfft")
            out = Tcomplex if kind == "rfft" else Treal
            return _transform(input, kind, n, ax, out.as_numpy_dtype)
    return lower


def _nd_rank(op):
    k = op.inputs[2].shape[0].value if op.inputs[2].shape.ndims == 1 else None
    if k is None:
        raise LookupError(f"Gradient of {op.type} '{op.name}' needs the number of axes")
    return k


def _nd_grad(kind):
    def grad(op, dy):
        x, fft_length = op.inputs[0], op.inputs[1]
        k = _nd_rank(op)
        if kind == "rfft":
            return [_rfft_input_grad(x, fft_length, dy, k), None, None]
        if kind == "irfft":
            return [_irfft_input_grad(x, fft_length, dy, k), None, None]
        # The complex transforms of an input cropped or padded to fft_length.
        back = _complex_fft_grad(dy, k, inverse=kind == "ifft")
        return [_fit_inner(back, _inner_dims(x, k), k), None, None]
    return grad


for _kind in ("fft", "ifft"):
    register(OpDef(
        _kind.upper() + "ND", inputs=("input: Tcomplex", "fft_length: int32", "axes: int32"),
        outputs=("output: Tcomplex",), attrs={"Tcomplex": _COMPLEX},
        type_defaults={"Tcomplex": _dtypes.complex64},
        shape=_nd_shape(False), lower=_nd_lower(_kind), grad=_nd_grad(_kind),
    ))
register(OpDef(
    "RFFTND", inputs=("input: Treal", "fft_length: int32", "axes: int32"),
    outputs=("output: Tcomplex",), attrs=dict(_REAL_ATTRS), type_defaults=_REAL_DEFAULTS,
    shape=_nd_shape(True), lower=_nd_lower("rfft"), grad=_nd_grad("rfft"),
))
register(OpDef(
    "IRFFTND", inputs=("input: Tcomplex", "fft_length: int32", "axes: int32"),
    outputs=("output: Treal",), attrs=dict(_REAL_ATTRS), type_defaults=_REAL_DEFAULTS,
    shape=_nd_shape(False), lower=_nd_lower("irfft"), grad=_nd_grad("irfft"),
))


# -- gradient building blocks ---------------------------------------------------------------
def _trailing_axes(k):
    return convert_to_tensor(list(range(-k, 0)), dtype=_dtypes.int32)


def _complex_fft(x, k, inverse):
    """The complex (inverse) FFT of x's inner k dims, by the rank-k record."""
    if k <= 3:
        return apply_op(("IFFT" if inverse else "FFT") + _NAMES[k], input=x)
    n = _inner_dims(x, k)
    return apply_op("IFFTND" if inverse else "FFTND", input=x, fft_length=n,
                    axes=_trailing_axes(k))


def _real_fft(x, fft_length, k, forward):
    attrs = ({"Tcomplex": _COMPLEX_OF[x.dtype.base_dtype]} if forward
             else {"Treal": _REAL_OF[x.dtype.base_dtype]})
    if k <= 3:
        return apply_op(("RFFT" if forward else "IRFFT") + _NAMES[k], input=x,
                        fft_length=fft_length, **attrs)
    return apply_op("RFFTND" if forward else "IRFFTND", input=x, fft_length=fft_length,
                    axes=_trailing_axes(k), **attrs)


def _inner_dims(t, k):
    """t's inner k sizes: a list of ints when static, else a 1-D int32 tensor."""
    inner = t.shape[-k:] if t.shape.ndims is not None else None
    if inner is not None and inner.is_fully_defined():
        return inner.as_list()
    return array_ops.shape(t)[-k:]


def _pad_after(t, amounts):
    """t zero-padded after its inner dims by `amounts` (ints, or a 1-D int32 tensor)."""
    if isinstance(amounts, list) and t.shape.ndims is not None:
        if not any(amounts):
            return t
        paddings = [[0, 0]] * (t.shape.ndims - len(amounts)) + [[0, a] for a in amounts]
        return array_ops.pad(t, paddings)
    amounts = convert_to_tensor(amounts, dtype=_dtypes.int32)
    outer = generator_ops.zeros(array_ops.reshape(array_ops.rank(t) - array_ops.size(amounts),
                                                  [1]), _dtypes.int32)
    after = array_ops.concat([outer, amounts], 0)
    return array_ops.pad(t, array_ops.stack([generator_ops.zeros_like(after), after], axis=1))


def _fit_inner(t, target, k):
    """`t` with its inner k dims cut or zero-padded to the sizes `target` (ints or a 1-D
    int32 tensor): the adjoint of the crop / zero-pad a transform applies to its input."""
    have = _inner_dims(t, k)
    if isinstance(target, list) and isinstance(have, list):
        if target == have:
            return t
        if all(h >= g for h, g in zip(have, target)):
            return t[(Ellipsis,) + tuple(slice(0, g) for g in target)]
    shape = array_ops.shape(t)
    have = shape[-k:]
    kept = slicing_ops.slice(t, generator_ops.zeros_like(shape),
                             array_ops.concat([shape[:-k], math_ops.minimum(have, target)], 0))
    return _pad_after(kept, math_ops.maximum(target - have, 0))


def _rfft_input_grad(x, fft_length, dy, k):
    # dL/dx_j = Re(sum over the kept bins of dy_f * e^{+2 pi i f.j / n}): the full inverse
    # FFT of dy zero-extended to n bins along the innermost axis, times N.
    n = static_value(fft_length)
    bins = dy.shape[-1].value if dy.shape.ndims is not None else None
    if n is not None and bins is not None:
        n = [int(v) for v in n]
        full = _pad_after(dy, [max(n[-1] - bins, 0)])
        size = convert_to_tensor(float(np.prod(n)), dtype=dy.dtype)
    else:
        missing = math_ops.maximum(fft_length[-1] - array_ops.shape(dy)[-1], 0)
        full = _pad_after(dy, array_ops.reshape(missing, [1]))
        size = math_ops.cast(reduce_ops.reduce_prod(fft_length), dy.dtype)
    back = math_ops.real(_complex_fft(full, k, inverse=True) * size)
    return _fit_inner(back, _inner_dims(x, k), k)


def _irfft_input_grad(x, fft_length, dy, k):
    # x = (1/N) sum_f c_f Re(X_f e^{+2 pi i f.j / n}) with c_f = 2 for the bins that stand
    # for a mirror image too (all but DC and, for even n, Nyquist), else 1.
    real = dy.dtype.base_dtype
    spectrum = _real_fft(dy, fft_length, k, forward=True)
    n = static_value(fft_length)
    if n is not None:
        n = [int(v) for v in n]
        mask = np.full(n[-1] // 2 + 1, 2.0)
        mask[0] = 1.0
        if n[-1] % 2 == 0:
            mask[-1] = 1.0
        scale = convert_to_tensor(mask / float(np.prod(n)), dtype=spectrum.dtype)
    else:
        n_last = fft_length[-1]
        is_odd = math_ops.floormod(n_last, 2)
        bins = n_last // 2 + 1
        mask = array_ops.concat([
            generator_ops.ones([1], real),
            2.0 * generator_ops.ones(array_ops.reshape(bins - 2 + is_odd, [1]), real),
            generator_ops.ones(array_ops.reshape(1 - is_odd, [1]), real)], 0)
        rsize = 1.0 / math_ops.cast(reduce_ops.reduce_prod(fft_length), real)
        scale = math_ops.cast(mask * rsize, spectrum.dtype)
    return _fit_inner(spectrum * scale, _inner_dims(x, k), k)


# -- public wrappers --------------------------------------------------------------------------
def fft(input, name=None):  # noqa: A002 - TF's argument name
    """Fast Fourier transform over the inner-most dimension of `input` (np.fft.fft)."""
    return apply_op("FFT", name=name, input=input)


def ifft(input, name=None):  # noqa: A002
    """Inverse FFT over the inner-most dimension of `input` (np.fft.ifft)."""
    return apply_op("IFFT", name=name, input=input)


def fft2d(input, name=None):  # noqa: A002
    """2-D FFT over the inner-most 2 dimensions of `input` (np.fft.fft2)."""
    return apply_op("FFT2D", name=name, input=input)


def ifft2d(input, name=None):  # noqa: A002
    """Inverse 2-D FFT over the inner-most 2 dimensions of `input` (np.fft.ifft2)."""
    return apply_op("IFFT2D", name=name, input=input)


def fft3d(input, name=None):  # noqa: A002
    """3-D FFT over the inner-most 3 dimensions of `input`."""
    return apply_op("FFT3D", name=name, input=input)


def ifft3d(input, name=None):  # noqa: A002
    """Inverse 3-D FFT over the inner-most 3 dimensions of `input`."""
    return apply_op("IFFT3D", name=name, input=input)


def _check_nonnegative(fft_length):
    value = static_value(fft_length)
    if value is not None:
        for v in np.reshape(value, -1):
            if int(v) < 0:
                raise ValueError(f"`fft_length` must be non-negative, got {int(v)}.")
    return value


def _check_irfft_length(value, k):
    if value is None:
        return
    value = np.asarray(value)
    if value.ndim != 1:
        raise ValueError(f"Shape {value.shape} must have rank 1")
    if value.size != k:
        raise ValueError(f"Dimension must be {k} but is {value.size}")
    if k and value[-1] <= 0:
        raise ValueError(f"fft_length[-1] must be > 0, got {int(value[-1])}")


def _inferred_length(x, k, inverse_real):
    """TF's default fft_length: the input's inner k sizes (for the inverse real FFTs the
    innermost is 2 * (bins - 1)), a constant when those sizes are static."""
    inner = x.shape[-k:] if x.shape.ndims is not None else unknown_shape(k)
    if inner.is_fully_defined():
        dims = inner.as_list()
        if inverse_real and dims:
            dims[-1] = max(0, 2 * (dims[-1] - 1))
        return convert_to_tensor(dims, dtype=_dtypes.int32)
    dims = array_ops.shape(x)[-k:]
    if not inverse_real:
        return dims
    last = math_ops.maximum(0, 2 * (dims[-1] - 1))
    return array_ops.concat([dims[:-1], array_ops.reshape(last, [1])], 0)


def _length_arg(x, fft_length, k, inverse_real):
    if fft_length is None:
        return _inferred_length(x, k, inverse_real)
    return convert_to_tensor(fft_length, dtype=_dtypes.int32)


def _rfft_wrapper(k, default_name):
    op_type = "RFFT" + _NAMES[k]

    def rfft(input_tensor, fft_length=None, name=None):
        with _graph.name_scope(name, default_name, [input_tensor, fft_length]) as scope:
            x = convert_to_tensor(input_tensor, preferred_dtype=_dtypes.float32)
            if x.dtype.base_dtype not in _REAL:
                raise ValueError(f"RFFT requires tf.float32 or tf.float64 inputs, got: {x}")
            x.shape.with_rank_at_least(k)
            fft_length = _length_arg(x, fft_length, k, inverse_real=False)
            _check_nonnegative(fft_length)
            return apply_op(op_type, name=scope, input=x, fft_length=fft_length,
                            Tcomplex=_COMPLEX_OF[x.dtype.base_dtype])
    rfft.__name__ = default_name
    rfft.__doc__ = (f"The {k}-D FFT of a real signal over its inner {k} dim(s): the "
                    f"fft_length // 2 + 1 unique bins of the innermost (np.fft.rfftn).")
    return rfft


def _irfft_wrapper(k, default_name):
    op_type = "IRFFT" + _NAMES[k]

    def irfft(input_tensor, fft_length=None, name=None):
        with _graph.name_scope(name, default_name, [input_tensor, fft_length]) as scope:
            y = convert_to_tensor(input_tensor, preferred_dtype=_dtypes.complex64)
            y.shape.with_rank_at_least(k)
            if y.dtype.base_dtype not in _COMPLEX:
                raise ValueError(f"IRFFT requires tf.complex64 or tf.complex128 inputs, "
                                 f"got: {y}")
            fft_length = _length_arg(y, fft_length, k, inverse_real=True)
            if y.shape.num_elements() != 0:
                _check_irfft_length(static_value(fft_length), k)
            return apply_op(op_type, name=scope, input=y, fft_length=fft_length,
                            Treal=_REAL_OF[y.dtype.base_dtype])
    irfft.__name__ = default_name
    irfft.__doc__ = (f"The inverse of rfft{'' if k == 1 else f'{k}d'}: a real signal of "
                     f"fft_length samples per transformed dim (np.fft.irfftn).")
    return irfft


rfft = _rfft_wrapper(1, "rfft")
irfft = _irfft_wrapper(1, "irfft")
rfft2d = _rfft_wrapper(2, "rfft2d")
irfft2d = _irfft_wrapper(2, "irfft2d")
rfft3d = _rfft_wrapper(3, "rfft3d")
irfft3d = _irfft_wrapper(3, "irfft3d")


def _scale(x, fft_length, norm, inverse):
    """TF's norm argument of the ND wrappers, applied to the input: "forward" divides
    the forward transform by N (multiplies the inverse's input by N), "ortho" by sqrt(N);
    anything else (None, "backward") leaves it."""
    if norm not in ("forward", "ortho"):
        return x
    value = static_value(fft_length)
    if value is not None:
        n = float(np.prod(np.reshape(value, -1).astype(np.float64)))
        n = np.sqrt(n) if norm == "ortho" else n
        factor = convert_to_tensor(n if inverse else 1.0 / n, dtype=x.dtype.real_dtype)
    else:
        n = math_ops.cast(reduce_ops.reduce_prod(fft_length), x.dtype.real_dtype)
        n = math_ops.sqrt(n) if norm == "ortho" else n
        factor = n if inverse else 1.0 / n
    return x * math_ops.cast(factor, x.dtype)


def _nd_wrapper(kind, default_name):
    op_type = kind.upper() + "ND"
    real_in = kind == "rfft"

    def wrapper(input_tensor, fft_length=None, axes=None, norm=None, name=None):
        with _graph.name_scope(name, default_name, [input_tensor, fft_length, axes]) as scope:
            x = convert_to_tensor(input_tensor, preferred_dtype=_dtypes.float32 if real_in
                                  else _dtypes.complex64)
            if axes is None:
                if x.shape.ndims is None:
                    raise ValueError(f"{default_name} needs `axes` when the input's rank "
                                     f"is unknown")
                axes = list(range(x.shape.ndims))
            axes = convert_to_tensor(axes, dtype=_dtypes.int32)
            k = axes.shape[0].value if axes.shape.ndims == 1 else None
            if kind in ("rfft", "irfft"):
                allowed, what = (_REAL, "float32 or tf.float64") if real_in else \
                    (_COMPLEX, "complex64 or tf.complex128")
                if x.dtype.base_dtype not in allowed:
                    raise ValueError(f"{kind.upper()} requires tf.{what} inputs, got: {x}")
            if k is not None:
                x.shape.with_rank_at_least(k)
            if fft_length is None:
                # TF passes the whole input shape here; the sizes along `axes` are what
                # its kernel can accept.
                fft_length = _inferred_length(x, k, inverse_real=kind == "irfft") \
                    if k is not None else array_ops.shape(x)
            else:
                fft_length = convert_to_tensor(fft_length, dtype=_dtypes.int32)
            if kind == "irfft":
                if x.shape.num_elements() != 0 and k is not None:
                    _check_irfft_length(static_value(fft_length), k)
            else:
                _check_nonnegative(fft_length)
            x = _scale(x, fft_length, norm, inverse=kind in ("ifft", "irfft"))
            attrs = {}
            if kind == "rfft":
                attrs["Tcomplex"] = _COMPLEX_OF[x.dtype.base_dtype]
            elif kind == "irfft":
                attrs["Treal"] = _REAL_OF[x.dtype.base_dtype]
            return apply_op(op_type, name=scope, input=x, fft_length=fft_length, axes=axes,
                            **attrs)
    wrapper.__name__ = default_name
    wrapper.__doc__ = (f"The N-D {kind} over `axes` (default: all; TF's kernel accepts "
                       f"trailing ascending axes), with np.fft's `norm` choices.")
    return wrapper


fftnd = _nd_wrapper("fft", "fftnd")
ifftnd = _nd_wrapper("ifft", "ifftnd")
rfftnd = _nd_wrapper("rfft", "rfftnd")
irfftnd = _nd_wrapper("irfft", "irfftnd")


def _shift(x, axes, name, default_name, sign):
    """numpy.fft.fftshift (sign -1: ifftshift): one Roll by +-(n // 2) along each axis."""
    with _graph.name_scope(name, default_name, [x]):
        x = convert_to_tensor(x)
        if axes is None:
            if x.shape.ndims is None:
                raise ValueError(f"{default_name} needs `axes` when the input's rank is "
                                 f"unknown")
            axes = list(range(x.shape.ndims))
        elif isinstance(axes, (int, np.integer)):
            axes = [int(axes)]
        sizes = [array_ops.shape(x)[axis] for axis in axes]
        shift = array_ops.stack([n // 2 if sign > 0 else -(n // 2) for n in sizes])
        return roll(x, shift, list(axes))


def fftshift(x, axes=None, name=None):
    """Moves the zero-frequency bin to the center of each of `axes` (default: all), as
    numpy.fft.fftshift."""
    return _shift(x, axes, name, "fftshift", 1)


def ifftshift(x, axes=None, name=None):
    """The inverse of fftshift (they differ by one sample on odd lengths), as
    numpy.fft.ifftshift."""
    return _shift(x, axes, name, "ifftshift", -1)
