"""tf.audio: DecodeWav and EncodeWav host records over io/wav.py (16-bit PCM WAV).

decode_wav gives float32 [samples, channels] in [-1, 1) (int16 / 32768) and the sample
rate; `desired_channels` takes the file's channels in order and repeats its last one
for extra channels, `desired_samples` cuts or pads with zeros, as TF's kernel does.
encode_wav writes round(x * 32768) clamped to int16.
"""

from __future__ import annotations

import collections

import numpy as np

from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.io import wav
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import dims_str, kernel_error, with_rank
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.strings.string_util import as_bytes

__all__ = ["decode_wav", "encode_wav"]

DecodeWav = collections.namedtuple("DecodeWav", ["audio", "sample_rate"])


def _decode_wav_kernel(contents, desired_channels, desired_samples):
    contents = np.asarray(contents, object)
    if contents.ndim != 0:
        raise kernel_error(f"contents must be scalar, got shape {dims_str(contents.shape)}")
    try:
        samples, sample_rate = wav.decode_wav(as_bytes(contents[()]))
    except wav.WavError as e:
        raise kernel_error(str(e)) from None
    frames, channels = samples.shape
    out_frames = frames if desired_samples == -1 else desired_samples
    out_channels = channels if desired_channels == -1 else desired_channels
    audio = np.zeros((out_frames, out_channels), np.float32)
    source = [min(c, channels - 1) for c in range(out_channels)]
    kept = min(frames, out_frames)
    audio[:kept] = samples[:kept][:, source]
    return audio, np.int32(sample_rate)


def _decode_wav_shape(op):
    with_rank(op.inputs[0].shape, 0)
    dims = []
    for attr, what in (("desired_samples", "samples"), ("desired_channels", "channels")):
        value = op.get_attr(attr)
        if value != -1 and value < 0:
            raise ValueError(f"{what} must be non-negative, got {value}")
        dims.append(None if value == -1 else value)
    return [TensorShape(dims), TensorShape([])]


register(OpDef("DecodeWav", inputs=("contents: string",),
               outputs=("audio: float32", "sample_rate: int32"),
               attrs={"desired_channels": -1, "desired_samples": -1},
               shape=_decode_wav_shape, host=_decode_wav_kernel, not_differentiable=True))


def _encode_wav_kernel(audio, sample_rate):
    audio, sample_rate = np.asarray(audio), np.asarray(sample_rate)
    if audio.ndim != 2:
        raise kernel_error(f"audio must be 2-dimensional{dims_str(audio.shape)}")
    if sample_rate.ndim != 0:
        raise kernel_error(f"Input sample_rate should be a scalar tensor, got "
                           f"{dims_str(sample_rate.shape)} instead.")
    try:
        return np.array(wav.encode_wav(audio, int(sample_rate)), object)
    except wav.WavError as e:
        raise kernel_error(str(e)) from None


def _encode_wav_shape(op):
    with_rank(op.inputs[0].shape, 2)
    with_rank(op.inputs[1].shape, 0)
    return TensorShape([])


register(OpDef("EncodeWav", inputs=("audio: float32", "sample_rate: int32"),
               outputs=("contents: string",), shape=_encode_wav_shape,
               host=_encode_wav_kernel, not_differentiable=True))


def decode_wav(contents, desired_channels=-1, desired_samples=-1, name=None):
    """(audio, sample_rate) of a 16-bit PCM WAV file's bytes: audio float32
    [samples, channels] in [-1, 1), sample_rate an int32 scalar."""
    audio, sample_rate = apply_op("DecodeWav", name=name, contents=contents,
                                  desired_channels=int(desired_channels),
                                  desired_samples=int(desired_samples))
    return DecodeWav(audio, sample_rate)


def encode_wav(audio, sample_rate, name=None):
    """The bytes of a 16-bit PCM WAV file holding `audio` (float32 [samples, channels])
    at `sample_rate` (an int32 scalar)."""
    return apply_op("EncodeWav", name=name, audio=audio, sample_rate=sample_rate)
