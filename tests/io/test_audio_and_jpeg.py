"""tf.audio WAV decoding/encoding against Python's wave module, and the JPEG header,
crop and WebP records against Pillow."""

import io
import wave

import numpy as np
import pytest
from PIL import Image

import tensorflux as tf
from tests.helpers import run

InvalidArgumentError = tf.errors.InvalidArgumentError


def _wav_bytes(samples, rate, width=2):
    """A WAV file written by the wave module: samples int [frames, channels]."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as f:
        f.setnchannels(samples.shape[1])
        f.setsampwidth(width)
        f.setframerate(rate)
        f.writeframes(samples.astype("<i2" if width == 2 else np.uint8).tobytes())
    return buffer.getvalue()


def test_decode_wav_against_wave_module():
    rng = np.random.RandomState(0)
    samples = rng.randint(-32768, 32768, size=(50, 2))
    data = _wav_bytes(samples, 22050)
    contents = tf.placeholder(tf.string, [])
    decoded = tf.audio.decode_wav(contents)
    assert decoded.audio.shape.as_list() == [None, None] and decoded.sample_rate.dtype == tf.int32
    wider = tf.audio.decode_wav(contents, desired_channels=3, desired_samples=60)
    narrower = tf.audio.decode_wav(contents, desired_channels=1, desired_samples=10)
    assert wider.audio.shape.as_list() == [60, 3]
    got = run([decoded, wider, narrower], {contents: data})
    want = samples.astype(np.float32) / 32768
    np.testing.assert_array_equal(got[0].audio, want)
    assert got[0].sample_rate == 22050
    np.testing.assert_array_equal(got[1].audio[:50], want[:, [0, 1, 1]])  # last one repeated
    np.testing.assert_array_equal(got[1].audio[50:], 0)
    np.testing.assert_array_equal(got[2].audio, want[:10, :1])


def test_encode_wav_read_back_by_wave_module():
    audio = np.array([[0.0, 0.5], [-0.5, 1.0], [-1.0, 2.0], [1 / 65536, -3 / 65536]], np.float32)
    data = run(tf.audio.encode_wav(audio, 8000))
    with wave.open(io.BytesIO(data)) as f:
        assert (f.getnchannels(), f.getsampwidth(), f.getframerate()) == (2, 2, 8000)
        frames = np.frombuffer(f.readframes(f.getnframes()), "<i2").reshape(-1, 2)
    scaled = audio.astype(np.float64) * 32768
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)  # C's round: halves away
    np.testing.assert_array_equal(frames, np.clip(rounded, -32768, 32767))
    assert len(data) == 44 + audio.size * 2


def test_wav_errors():
    contents = tf.placeholder(tf.string, [])
    decoded = tf.audio.decode_wav(contents).audio
    for data, message in [
            (b"RIFX" + bytes(40), "Header mismatch: Expected RIFF but found RIFX"),
            (_wav_bytes(np.zeros((4, 1), int), 100, width=1),
             "Can only read 16-bit WAV files, but received 8"),
            (b"RIFF", "Data too short when trying to read string"),
            (_wav_bytes(np.zeros((4, 1), int), 100)[:36], "No data chunk found in WAV")]:
        with pytest.raises(InvalidArgumentError) as info:
            run(decoded, {contents: data})
        assert info.value.message.splitlines()[0] == message
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
        tf.audio.encode_wav([0.5], 100)
    with pytest.raises(ValueError, match="channels must be non-negative, got -2"):
        tf.audio.decode_wav("x", desired_channels=-2)


def _jpeg(pixels, mode=None, **options):
    buffer = io.BytesIO()
    Image.fromarray(pixels, mode).save(buffer, "JPEG", **options)
    return buffer.getvalue()


def test_jpeg_header_crop_and_magic():
    rgb = (np.arange(40 * 56 * 3) % 253).astype(np.uint8).reshape(40, 56, 3)
    gray = rgb[..., 0].copy()
    jpeg_rgb, jpeg_gray = _jpeg(rgb, quality=90), _jpeg(gray)
    cmyk = io.BytesIO()
    Image.fromarray(rgb).convert("CMYK").save(cmyk, "JPEG")
    png = io.BytesIO()
    Image.fromarray(rgb).save(png, "PNG")
    got = run({
        "shape": tf.io.extract_jpeg_shape(jpeg_rgb),
        "gray": tf.image.extract_jpeg_shape(jpeg_gray, output_type=tf.int64),
        "cmyk": tf.io.extract_jpeg_shape(cmyk.getvalue()),
        "crop": tf.io.decode_and_crop_jpeg(jpeg_rgb, [3, 5, 20, 30]),
        "crop_gray": tf.image.decode_and_crop_jpeg(jpeg_rgb, [0, 0, 40, 56], channels=1),
        "magic": [tf.io.is_jpeg(jpeg_rgb), tf.image.is_jpeg(png.getvalue()),
                  tf.io.is_jpeg(b"\xff\xd8")],
    })
    assert got["shape"].dtype == np.int32 and got["shape"].tolist() == [40, 56, 3]
    assert got["gray"].dtype == np.int64 and got["gray"].tolist() == [40, 56, 1]
    assert got["cmyk"].tolist() == [40, 56, 4]
    decoded = np.asarray(Image.open(io.BytesIO(jpeg_rgb)).convert("RGB"))
    np.testing.assert_array_equal(got["crop"], decoded[3:23, 5:35])
    image = Image.open(io.BytesIO(jpeg_rgb))
    image.draft("L", None)  # libjpeg's grayscale output: the Y channel
    np.testing.assert_array_equal(got["crop_gray"][..., 0], np.asarray(image))
    assert [bool(m) for m in got["magic"]] == [True, False, False]
    for name in ("is_jpeg", "extract_jpeg_shape", "decode_and_crop_jpeg", "decode_jpeg",
                 "decode_png", "decode_image", "encode_jpeg", "encode_png", "decode_gif",
                 "decode_bmp", "decode_webp"):
        assert getattr(tf.io, name) is getattr(tf.image, name), name
    assert tf.io.decode_and_crop_jpeg(jpeg_rgb, [3, 5, 20, 30]).shape.as_list() == [20, 30, None]
    window = tf.placeholder(tf.int32, [4])
    crop = tf.io.decode_and_crop_jpeg(jpeg_rgb, window)
    with pytest.raises(InvalidArgumentError, match="Invalid JPEG data or crop window"):
        run(crop, {window: [30, 0, 20, 10]})
    with pytest.raises(InvalidArgumentError, match="ExtractJpegShape: Invalid JPEG data, size 4"):
        run(tf.io.extract_jpeg_shape(b"\xff\xd8\xff\x00"))
