"""DCT/IDCT, STFT/inverse STFT and MDCT/inverse MDCT: compositions of frame,
overlap_and_add, the windows and the real FFT records, as TF builds them (so they have
TF's values, including its length conventions, and gradients through the FFT records).

dct (types 1-4, `n`, norm=None/'ortho', axis=-1 only) uses the real FFT of a 2N-point
(type 1: 2N - 2 point) extension of the signal, as TF does; types 2 and 3 are each
other's inverse up to 1 / 2N, type 4 is the odd bins of a 2N-point type 2.
"""

from __future__ import annotations

import math

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops, generator_ops, slicing_ops
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.shape_fns import static_value
from tensorflux._src.ops.signal import fft_ops, frame_ops, window_ops

__all__ = []


# -- DCT --------------------------------------------------------------------------------------
def _validate_dct_arguments(input_tensor, dct_type, n, axis, norm):
    if axis != -1:
        raise NotImplementedError(f"axis must be -1. Got: {axis}")
    if n is not None and n < 1:
        raise ValueError("n should be a positive integer or None")
    if dct_type not in (1, 2, 3, 4):
        raise ValueError("Types I, II, III and IV (I)DCT are supported.")
    if dct_type == 1:
        if norm == "ortho":
            raise ValueError("Normalization is not supported for the Type-I DCT.")
        last = input_tensor.shape[-1].value if input_tensor.shape.ndims else None
        if last is not None and last < 2:
            raise ValueError("Type-I DCT requires the dimension to be greater than one.")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")


def _last_dim(x):
    """The size of x's last dimension: a Python int when static, else a scalar tensor."""
    if x.shape.ndims is not None and x.shape[-1].value is not None:
        return x.shape[-1].value
    return array_ops.shape(x)[-1]


def _resize_last(x, n):
    """x cut or zero-padded to n samples (an int or a scalar tensor) along its last axis."""
    length = _last_dim(x)
    if isinstance(length, int) and isinstance(n, int):
        if n <= length:
            return x[..., :n]
        return array_ops.pad(x, [[0, 0]] * (x.shape.ndims - 1) + [[0, n - length]])
    x = x[..., :n]
    missing = math_ops.maximum(0, math_ops.cast(n, _dtypes.int32) - array_ops.shape(x)[-1])
    rank = array_ops.rank(x)
    after = array_ops.concat([generator_ops.zeros(array_ops.reshape(rank - 1, [1]),
                                                  _dtypes.int32),
                              array_ops.reshape(missing, [1])], 0)
    return array_ops.pad(x, array_ops.stack([generator_ops.zeros_like(after), after], 1))


def _leading_weight(first, rest, size, dtype):
    """[first, rest, rest, ...] of length `size`."""
    tail = generator_ops.fill(array_ops.reshape(size - 1, [1]),
                              math_ops.cast(rest, dtype))
    return array_ops.concat([array_ops.reshape(math_ops.cast(first, dtype), [1]), tail], 0)


def _dct(x, dct_type, n, norm):
    x = convert_to_tensor(x)
    if n is not None:
        x = _resize_last(x, n)
    size = _last_dim(x)
    size_f = math_ops.cast(size, x.dtype)
    zero = convert_to_tensor(0.0, dtype=x.dtype)
    if dct_type == 1:
        # The real FFT of the even extension x0..x(N-1), x(N-2)..x1.
        extended = array_ops.concat([x, array_ops.reverse(x[..., 1:-1], [-1])], -1)
        return math_ops.real(fft_ops.rfft(extended))
    if dct_type == 2:
        k = math_ops.cast(math_ops.range(size), x.dtype)
        twiddle = 2.0 * math_ops.exp(math_ops.complex(zero, -k * math.pi * 0.5 / size_f))
        spectrum = fft_ops.rfft(x, fft_length=array_ops.reshape(2 * size, [1]))
        out = math_ops.real(spectrum[..., :size] * twiddle)
        if norm == "ortho":
            n1 = 0.5 * math_ops.rsqrt(size_f)
            out = out * _leading_weight(n1, n1 * math.sqrt(2.0), size, x.dtype)
        return out
    if dct_type == 3:
        if norm == "ortho":
            n1 = math_ops.sqrt(size_f)
            x = x * _leading_weight(n1, n1 * math.sqrt(0.5), size, x.dtype)
        else:
            x = x * size_f
        k = math_ops.cast(math_ops.range(size), x.dtype)
        twiddle = 2.0 * math_ops.exp(math_ops.complex(zero, k * math.pi * 0.5 / size_f))
        signal = fft_ops.irfft(twiddle * math_ops.complex(x, generator_ops.zeros_like(x)),
                               fft_length=array_ops.reshape(2 * size, [1]))
        return signal[..., :size]
    # Type 4: the odd bins of the unnormalized type 2 of x zero-padded to 2N.
    out = _dct(_resize_last(x, 2 * size), 2, None, None)[..., 1::2]
    if norm == "ortho":
        out = out * (math.sqrt(0.5) * math_ops.rsqrt(size_f))
    return out


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002 - TF's names
    """The type 1-4 DCT of `input`'s last axis (scipy.fftpack.dct), `n` points (cut or
    zero-padded), unnormalized or norm='ortho'."""
    with _graph.name_scope(name, "dct", [input]):
        input = convert_to_tensor(input)  # noqa: A001
        _validate_dct_arguments(input, type, n, axis, norm)
        return _dct(input, type, n, norm)


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002
    """The inverse DCT: the DCT of the inverse type (2 <-> 3, 1 and 4 are their own);
    unnormalized it is the inverse times 2N (2(N-1) for type 1)."""
    with _graph.name_scope(name, "dct", [input]):
        input = convert_to_tensor(input)  # noqa: A001
        _validate_dct_arguments(input, type, n, axis, norm)
        return _dct(input, {1: 1, 2: 3, 3: 2, 4: 4}[type], n, norm)


# -- STFT -------------------------------------------------------------------------------------
def _enclosing_power_of_two(value):
    """2**ceil(log2(value)), a constant when value is."""
    static = static_value(value)
    if static is not None:
        return convert_to_tensor(int(2 ** np.ceil(np.log(static) / np.log(2.0))),
                                 dtype=value.dtype)
    exponent = math_ops.ceil(math_ops.log(math_ops.cast(value, _dtypes.float32)) /
                             math.log(2.0))
    return math_ops.cast(math_ops.pow(2.0, exponent), value.dtype)


def _frame_args(frame_length, frame_step, fft_length):
    """stft's and inverse_stft's scalar arguments as tensors (fft_length default: the power
    of 2 enclosing frame_length)."""
    frame_length = convert_to_tensor(frame_length, name="frame_length")
    frame_length.shape.assert_has_rank(0)
    frame_step = convert_to_tensor(frame_step, name="frame_step")
    frame_step.shape.assert_has_rank(0)
    if fft_length is None:
        return frame_length, frame_step, _enclosing_power_of_two(frame_length)
    return frame_length, frame_step, convert_to_tensor(fft_length, name="fft_length")


def stft(signals, frame_length, frame_step, fft_length=None,
         window_fn=window_ops.hann_window, pad_end=False, name=None):
    """The short-time Fourier transform: `[..., frames, fft_length // 2 + 1]` real FFTs
    of the windowed frames of `signals` (fft_length default: the power of 2 enclosing
    frame_length)."""
    with _graph.name_scope(name, "stft", [signals, frame_length, frame_step]):
        signals = convert_to_tensor(signals, name="signals")
        signals.shape.with_rank_at_least(1)
        frame_length, frame_step, fft_length = _frame_args(frame_length, frame_step,
                                                           fft_length)
        framed = frame_ops.frame(signals, frame_length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            framed = framed * window_fn(frame_length, dtype=framed.dtype)
        return fft_ops.rfft(framed, array_ops.reshape(fft_length, [1]))


def inverse_stft_window_fn(frame_step, forward_window_fn=window_ops.hann_window, name=None):
    """A window function for inverse_stft: the forward window divided by the overlapped
    sum of its squares (Griffin and Lim's eq. 7), so overlap-add inverts stft."""
    with _graph.name_scope(name, "inverse_stft_window_fn", []):
        frame_step = convert_to_tensor(frame_step, name="frame_step")
        frame_step.shape.assert_has_rank(0)

    def inverse_stft_window_fn_inner(frame_length, dtype):
        with _graph.name_scope(name, "inverse_stft_window_fn", []):
            frame_length = convert_to_tensor(frame_length, name="frame_length")
            frame_length.shape.assert_has_rank(0)
            forward = forward_window_fn(frame_length, dtype=dtype)
            squares = math_ops.square(forward)
            overlaps = -(-frame_length // frame_step)
            squares = array_ops.pad(
                squares, array_ops.reshape(array_ops.stack(
                    [0, overlaps * frame_step - frame_length]), [1, 2]))
            squares = array_ops.reshape(squares, array_ops.stack([overlaps, frame_step]))
            denom = reduce_ops.reduce_sum(squares, 0, keepdims=True)
            denom = array_ops.reshape(array_ops.tile(denom, array_ops.stack([overlaps, 1])),
                                      array_ops.reshape(overlaps * frame_step, [1]))
            return forward / denom[:frame_length]
    return inverse_stft_window_fn_inner


def inverse_stft(stfts, frame_length, frame_step, fft_length=None,
                 window_fn=window_ops.hann_window, name=None):
    """The inverse STFT: irfft of each frame, cut or zero-padded to frame_length,
    windowed and overlap-added. Use inverse_stft_window_fn for a perfect inverse."""
    with _graph.name_scope(name, "inverse_stft", [stfts]):
        stfts = convert_to_tensor(stfts, name="stfts")
        stfts.shape.with_rank_at_least(2)
        frame_length, frame_step, fft_length = _frame_args(frame_length, frame_step,
                                                           fft_length)
        fft_length.shape.assert_has_rank(0)
        frames = fft_ops.irfft(stfts, array_ops.reshape(fft_length, [1]))
        # frame_length may differ from fft_length: cut or zero-pad each frame to it.
        length_static = static_value(frame_length)
        if length_static is not None:
            frames = _resize_last(frames, int(length_static))
            if frames.shape.ndims is not None:
                frames.set_shape([None] * (frames.shape.ndims - 1) + [int(length_static)])
        else:
            frames = _resize_last(frames, frame_length)
        if window_fn is not None:
            frames = frames * window_fn(frame_length, dtype=stfts.dtype.real_dtype)
        return frame_ops.overlap_and_add(frames, frame_step)


# -- MDCT -------------------------------------------------------------------------------------
def mdct(signals, frame_length, window_fn=window_ops.vorbis_window, pad_end=False,
         norm=None, name=None):
    """The modified DCT of frames of `frame_length` (a multiple of 4) every
    frame_length // 2 samples: `[..., frames, frame_length // 2]`, by TF's fold of each
    windowed frame into a type-4 DCT (window None: a flat 1/sqrt(2))."""
    with _graph.name_scope(name, "mdct", [signals, frame_length]):
        signals = convert_to_tensor(signals, name="signals")
        signals.shape.with_rank_at_least(1)
        frame_length = convert_to_tensor(frame_length, name="frame_length")
        frame_length.shape.assert_has_rank(0)
        length_static = static_value(frame_length)
        if length_static is not None:
            if int(length_static) % 4 != 0:
                raise ValueError("The frame length must be a multiple of 4.")
            frame_step = convert_to_tensor(int(length_static) // 2, dtype=frame_length.dtype)
        else:
            frame_step = frame_length // 2
        framed = frame_ops.frame(signals, frame_length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            framed = framed * window_fn(frame_length, dtype=framed.dtype)
        else:
            framed = framed * (1.0 / np.sqrt(2))
        a, b, c, d = slicing_ops.split(framed, 4, axis=-1)
        first = -array_ops.reverse(c, [-1]) - d
        second = a - array_ops.reverse(b, [-1])
        return _dct(array_ops.concat([first, second], -1), 4, None, norm)


def inverse_mdct(mdcts, window_fn=window_ops.vorbis_window, norm=None, name=None):
    """The inverse of mdct (with the same window): unfold each type-4 DCT into a frame
    of 2 * bins samples, window and overlap-add every `bins` samples."""
    with _graph.name_scope(name, "inverse_mdct", [mdcts]):
        mdcts = convert_to_tensor(mdcts, name="mdcts")
        mdcts.shape.with_rank_at_least(2)
        half_len = _last_dim(mdcts)
        if norm is None:
            half_f = math_ops.cast(half_len, mdcts.dtype)
            unfolded = (0.5 / half_f) * _dct(mdcts, 4, None, None)
        elif norm == "ortho":
            unfolded = _dct(mdcts, 4, None, "ortho")
        else:
            raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")
        lo, hi = slicing_ops.split(unfolded, 2, axis=-1)
        frames = array_ops.concat([hi, -array_ops.reverse(hi, [-1]),
                                   -array_ops.reverse(lo, [-1]), -lo], -1)
        if window_fn is not None:
            frames = frames * window_fn(2 * half_len, dtype=mdcts.dtype)
        else:
            frames = frames * (1.0 / np.sqrt(2))
        return frame_ops.overlap_and_add(frames, half_len)
