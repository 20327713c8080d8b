"""16-bit PCM WAV files, as TF's lib/wav/wav_io.cc reads and writes them.

Writing: a 44-byte header (RIFF, "fmt " chunk of 16 bytes, PCM, "data") then the samples,
interleaved by channel, as little-endian int16: round(sample * 32768) clamped to
[-32768, 32767]. Reading: "RIFF", "WAVE", optional JUNK/bext/... chunks, a "fmt " chunk
of 16 or 18 bytes that must say PCM with 16 bits per sample and consistent byte counts,
then chunks until a single "data" chunk; samples read back as int16 / 32768. Errors are
TF's texts (ValueError here; the ops raise them as InvalidArgumentError).
"""

from __future__ import annotations

import struct

import numpy as np

_SKIPPABLE = {b"JUNK", b"bext", b"iXML", b"qlty", b"mext", b"levl", b"link", b"axml"}
_INT32_MAX = 2 ** 31 - 1


class WavError(ValueError):
    pass


def encode_wav(audio: np.ndarray, sample_rate: int) -> bytes:
    """audio: float32 [frames, channels]."""
    frames, channels = audio.shape
    if not 0 < sample_rate <= 0xFFFFFFFF:
        raise WavError(f"sample_rate must be in (0, 2^32), got: {sample_rate}")
    if not 0 < channels <= 0xFFFF:
        raise WavError(f"num_channels must be in (0, 2^16), got: {channels}")
    data_size = frames * channels * 2
    if 44 + data_size > 0xFFFFFFFF:
        raise WavError("Provided channels and frames cannot be encoded as a WAV.")
    # roundf rounds halves away from zero; float32 arithmetic as in TF.
    scaled = np.asarray(audio, np.float32).reshape(-1) * np.float32(32768.0)
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5))
    samples = np.clip(rounded, -32768, 32767).astype("<i2")
    header = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + data_size, b"WAVE", b"fmt ", 16,
                         1, channels, sample_rate, sample_rate * 2 * channels, 2 * channels,
                         16, b"data", data_size)
    return header + samples.tobytes()


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.offset = data, 0

    def advance(self, count):
        new = self.offset + count
        if new > len(self.data):
            raise WavError("Data too short when trying to read string")
        start, self.offset = self.offset, new
        return start

    def text(self, count=4):
        start = self.advance(count)
        return self.data[start:start + count]

    def expect(self, text):
        found = self.text(len(text))
        if found != text:
            raise WavError(f"Header mismatch: Expected {text.decode()} but found "
                           f"{found.decode('latin-1')}")

    def value(self, fmt):
        size = struct.calcsize(fmt)
        start = self.advance(size)
        return struct.unpack_from(fmt, self.data, start)[0]


def decode_wav(data: bytes):
    """(int16 samples as float32 [frames, channels], sample rate)."""
    r = _Reader(data)
    r.expect(b"RIFF")
    r.value("<I")  # the file size, not checked (TF neither)
    r.expect(b"WAVE")
    chunk = r.text()
    while chunk != b"fmt ":
        # Padding or metadata chunks may come between "WAVE" and "fmt ".
        if chunk not in _SKIPPABLE:
            raise WavError(f"Unexpected field {chunk.decode('latin-1')}")
        r.advance(r.value("<I"))
        chunk = r.text()
    format_size = r.value("<I")
    if format_size not in (16, 18):
        raise WavError(f"Bad format chunk size for WAV: Expected 16 or 18, but got"
                       f"{format_size}")
    audio_format = r.value("<H")
    if audio_format != 1:
        raise WavError(f"Bad audio format for WAV: Expected 1 (PCM), but got{audio_format}")
    channels = r.value("<H")
    if channels < 1:
        raise WavError(f"Bad number of channels for WAV: Expected at least 1, but got "
                       f"{channels}")
    sample_rate = r.value("<I")
    bytes_per_second = r.value("<I")
    bytes_per_frame = r.value("<H")
    bits = r.value("<H")
    if bits != 16:
        raise WavError(f"Can only read 16-bit WAV files, but received {bits}")
    if bytes_per_frame != (bits * channels + 7) // 8:
        raise WavError(f"Bad bytes per sample in WAV header: Expected "
                       f"{(bits * channels + 7) // 8} but got {bytes_per_frame}")
    if bytes_per_second != bytes_per_frame * sample_rate:
        raise WavError(f"Bad bytes per second in WAV header: Expected "
                       f"{bytes_per_frame * sample_rate} but got {bytes_per_second} "
                       f"(sample_rate={sample_rate}, bytes_per_sample={bytes_per_frame})")
    if format_size == 18:
        r.offset += 2
    samples = None
    while r.offset < len(data):
        chunk_id = r.text()
        size = r.value("<I")
        if size > _INT32_MAX:
            raise WavError(f"WAV data chunk '{chunk_id.decode('latin-1')}' is too large: "
                           f"{size} bytes, but the limit is {_INT32_MAX}")
        if chunk_id == b"data":
            if samples is not None:
                raise WavError("More than one data chunk found in WAV")
            frames = size // bytes_per_frame
            start = r.advance(2 * frames * channels)
            raw = np.frombuffer(data, "<i2", frames * channels, start)
            samples = (raw.astype(np.float32) * np.float32(1.0 / 32768)).reshape(frames,
                                                                                 channels)
        else:
            r.offset += size
    if samples is None:
        raise WavError("No data chunk found in WAV")
    return samples, sample_rate
