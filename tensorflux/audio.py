"""`tf.audio`: 16-bit PCM WAV decoding and encoding."""

from tensorflux._src.ops.strings.audio_ops import decode_wav, encode_wav  # noqa: F401
