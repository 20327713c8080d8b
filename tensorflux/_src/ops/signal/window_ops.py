"""Window functions of tf.signal (hann, hamming, kaiser, Kaiser-Bessel-derived, vorbis),
composed from registry ops, with TF's formulas and argument checks.

TF's raised-cosine windows divide by `window_length - 1 + periodic * even`: a periodic
window of odd length is the symmetric one (unlike scipy's), and length 1 gives [1].
Windows of a static length are constants computed in float64 and rounded to `dtype`
(TF evaluates the same formula in `dtype`; they differ by at most rounding).
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops, gather_ops, generator_ops
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.nn import nn_ops
from tensorflux._src.ops.shape_fns import static_value

__all__ = []


def _check_params(window_length, dtype):
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype}")
    window_length = convert_to_tensor(window_length, dtype=_dtypes.int32,
                                      name="window_length")
    window_length.shape.assert_has_rank(0)
    return window_length, dtype


def _length_one(window_length):
    value = static_value(window_length)
    return value is not None and int(value) == 1


def _where_length_one(window_length, window, dtype):
    """`window`, or [1] when the (run-time) length is 1, where the formula divides by 0."""
    if static_value(window_length) is not None:
        return window
    return gather_ops.where_v2(math_ops.equal(window_length, 1),
                               generator_ops.ones_like(window), window)


def _raised_cosine(name, default_name, window_length, periodic, dtype, a, b):
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype}")
    with _graph.name_scope(name, default_name, [window_length, periodic]):
        window_length = convert_to_tensor(window_length, dtype=_dtypes.int32,
                                          name="window_length")
        window_length.shape.assert_has_rank(0)
        if _length_one(window_length):
            return generator_ops.ones([1], dtype=dtype)
        periodic = convert_to_tensor(periodic, dtype=_dtypes.bool, name="periodic")
        periodic.shape.assert_has_rank(0)
        length, is_periodic = static_value(window_length), static_value(periodic)
        if length is not None and is_periodic is not None:
            # A constant: computed here in float64, rounded once to dtype.
            length = int(length)
            n = length - 1 + (1 if bool(is_periodic) and length % 2 == 0 else 0)
            values = a - b * np.cos(2.0 * np.pi * np.arange(length) / n)
            return convert_to_tensor(values.astype(dtype.as_numpy_dtype), dtype=dtype)
        periodic = math_ops.cast(periodic, _dtypes.int32)
        even = 1 - math_ops.floormod(window_length, 2)
        n = math_ops.cast(window_length + periodic * even - 1, dtype)
        count = math_ops.cast(math_ops.range(window_length), dtype)
        window = a - b * math_ops.cos(2.0 * np.pi * count / n)
        return _where_length_one(window_length, window, dtype)


def hann_window(window_length, periodic=True, dtype=_dtypes.float32, name=None):
    """0.5 - 0.5 cos(2 pi n / N): N = window_length for a periodic window of even length,
    window_length - 1 otherwise."""
    return _raised_cosine(name, "hann_window", window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length, periodic=True, dtype=_dtypes.float32, name=None):
    """0.54 - 0.46 cos(2 pi n / N), N as in hann_window."""
    return _raised_cosine(name, "hamming_window", window_length, periodic, dtype, 0.54, 0.46)


def kaiser_window(window_length, beta=12.0, dtype=_dtypes.float32, name=None):
    """The Kaiser window I0(beta sqrt(1 - (2n / (L - 1) - 1)^2)) / I0(beta) (numpy.kaiser),
    through the scaled Bessel function i0e so large beta does not overflow."""
    with _graph.name_scope(name, "kaiser_window"):
        window_length, dtype = _check_params(window_length, dtype)
        if _length_one(window_length):
            return generator_ops.ones([1], dtype=dtype)
        # The half-integer grid is built in float32, as TF does (float16 has no range).
        half = (math_ops.cast(window_length, _dtypes.float32) - 1.0) / 2.0
        arg = math_ops.cast(math_ops.cast(math_ops.range(window_length),
                                          _dtypes.float32) - half, dtype)
        beta = math_ops.cast(beta, dtype)
        half = math_ops.cast(half, dtype)
        num = beta * math_ops.sqrt(nn_ops.relu(1.0 - math_ops.square(arg / half)))
        window = math_ops.exp(num - beta) * (math_ops.bessel_i0e(num) /
                                             math_ops.bessel_i0e(beta))
        return _where_length_one(window_length, window, dtype)


def kaiser_bessel_derived_window(window_length, beta=12.0, dtype=_dtypes.float32,
                                 name=None):
    """The Kaiser-Bessel-derived window: sqrt of the normalized running sum of a Kaiser
    window of window_length // 2 + 1 points, mirrored (TF's length is 2 * (L // 2))."""
    with _graph.name_scope(name, "kaiser_bessel_derived_window"):
        window_length, dtype = _check_params(window_length, dtype)
        half = window_length // 2
        kaiser = kaiser_window(half + 1, beta, dtype=dtype)
        running = reduce_ops.cumsum(kaiser)
        half_window = math_ops.sqrt(running[:-1] / running[-1])
        return array_ops.concat([half_window, array_ops.reverse(half_window, [0])], 0)


def vorbis_window(window_length, dtype=_dtypes.float32, name=None):
    """The Vorbis power-complementary window sin(pi/2 sin^2(pi (n + 0.5) / L))."""
    with _graph.name_scope(name, "vorbis_window"):
        window_length, dtype = _check_params(window_length, dtype)
        length = static_value(window_length)
        if length is not None:
            arg = np.arange(int(length)) + 0.5
            values = np.sin(np.pi / 2.0 * np.sin(np.pi / int(length) * arg) ** 2)
            return convert_to_tensor(values.astype(dtype.as_numpy_dtype), dtype=dtype)
        arg = math_ops.cast(math_ops.range(window_length), dtype)
        inner = math_ops.sin(np.pi / math_ops.cast(window_length, dtype) * (arg + 0.5))
        return math_ops.sin(np.pi / 2.0 * math_ops.square(inner))
