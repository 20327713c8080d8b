"""Mel-scale weights and MFCCs (tf.signal.linear_to_mel_weight_matrix,
mfccs_from_log_mel_spectrograms), composed from registry ops with TF's formulas.

The mel scale is HTK's, mel = 1127 ln(1 + hz / 700). Each mel band is a triangle in the
mel domain over [lower, center, upper] edges, the num_mel_bins + 2 points evenly spaced
in mel between lower_edge_hertz and upper_edge_hertz; the DC spectrogram bin gets zero
weight (HTK excludes it).
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops, slicing_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.shape_fns import static_value
from tensorflux._src.ops.signal import frame_ops, spectral_ops

__all__ = []

_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def _hertz_to_mel(hertz):
    return _MEL_HIGH_FREQUENCY_Q * math_ops.log(1.0 + hertz / _MEL_BREAK_FREQUENCY_HERTZ)


def _validate_arguments(num_mel_bins, sample_rate, lower_edge_hertz, upper_edge_hertz,
                        dtype):
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if sample_rate <= 0.0:
        raise ValueError(f"sample_rate must be positive. Got: {sample_rate}")
    if lower_edge_hertz < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}")
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError(f"lower_edge_hertz {lower_edge_hertz:.1f} >= upper_edge_hertz "
                         f"{upper_edge_hertz:.1f}")
    if upper_edge_hertz > sample_rate / 2:
        raise ValueError(f"upper_edge_hertz must not be larger than the Nyquist frequency "
                         f"(sample_rate / 2). Got: {upper_edge_hertz} for sample_rate: "
                         f"{sample_rate}")
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Got: {dtype}")


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000,
                                lower_edge_hertz=125.0, upper_edge_hertz=3800.0,
                                dtype=_dtypes.float32, name=None):
    """A `[num_spectrogram_bins, num_mel_bins]` matrix taking linear-frequency spectrogram
    bins (0 .. sample_rate / 2) to triangular mel bands: `mel = spectrogram @ matrix`."""
    with _graph.name_scope(name, "linear_to_mel_weight_matrix") as scope:
        if isinstance(sample_rate, Tensor):
            value = static_value(sample_rate)
            if value is None:
                raise ValueError("`sample_rate` was a non-constant Tensor. Must be a Python "
                                 "float or a constant Tensor.")
            sample_rate = value
        dtype = _dtypes.as_dtype(dtype)
        _validate_arguments(num_mel_bins, sample_rate, lower_edge_hertz, upper_edge_hertz,
                            dtype)
        sample_rate = convert_to_tensor(sample_rate, dtype, name="sample_rate")
        lower_edge_hertz = convert_to_tensor(lower_edge_hertz, dtype, name="lower_edge_hertz")
        upper_edge_hertz = convert_to_tensor(upper_edge_hertz, dtype, name="upper_edge_hertz")
        zero = convert_to_tensor(0.0, dtype)
        nyquist = sample_rate / 2.0
        # Bin 0 (DC) is dropped here and re-added as a zero row at the end.
        frequencies = math_ops.linspace(zero, nyquist, num_spectrogram_bins)[1:]
        bins_mel = array_ops.expand_dims(_hertz_to_mel(frequencies), 1)
        edges = frame_ops.frame(
            math_ops.linspace(_hertz_to_mel(lower_edge_hertz),
                                   _hertz_to_mel(upper_edge_hertz), num_mel_bins + 2),
            frame_length=3, frame_step=1)
        lower, center, upper = (array_ops.reshape(t, [1, num_mel_bins])
                                for t in slicing_ops.split(edges, 3, axis=1))
        rising = (bins_mel - lower) / (center - lower)
        falling = (upper - bins_mel) / (upper - center)
        weights = math_ops.maximum(zero, math_ops.minimum(rising, falling))
        return array_ops.pad(weights, [[1, 0], [0, 0]], name=scope)


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """MFCCs of `[..., num_mel_bins]` log-magnitude mel spectrograms: HTK's scaling of
    the DCT-II, dct(x) / sqrt(2 * num_mel_bins)."""
    with _graph.name_scope(name, "mfccs_from_log_mel_spectrograms", [log_mel_spectrograms]):
        x = convert_to_tensor(log_mel_spectrograms)
        if x.shape.ndims and x.shape[-1].value is not None:
            num_mel_bins = x.shape[-1].value
            if num_mel_bins == 0:
                raise ValueError(f"num_mel_bins must be positive. Got: {x}")
        else:
            num_mel_bins = array_ops.shape(x)[-1]
        dct2 = spectral_ops.dct(x, type=2)
        return dct2 * math_ops.rsqrt(math_ops.cast(num_mel_bins, x.dtype) * 2.0)

