"""tf.image.adjust_jpeg_quality / random_jpeg_quality (EncodeJpegVariableQuality),
decode_webp (DecodeWebP) and decode_jxl (DecodeJxl) against files and round trips made
here with Pillow and imagecodecs."""

import io
import sys

import numpy as np
import pytest
from PIL import Image

import tensorflux as tf
from tests.helpers import run

RNG = np.random.default_rng(9)
PIXELS = RNG.integers(0, 256, (12, 10, 3), dtype=np.uint8)


def pillow_jpeg_round_trip(pixels, quality):
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "JPEG", quality=quality)
    return np.asarray(Image.open(io.BytesIO(buffer.getvalue())).convert("RGB"))


def test_adjust_jpeg_quality():
    ph = tf.placeholder(tf.uint8, [12, 10, 3])
    quality = tf.placeholder(tf.int32, [])
    adjusted = tf.image.adjust_jpeg_quality(ph, 30)
    fed = tf.image.adjust_jpeg_quality(ph, quality)
    as_float = tf.image.adjust_jpeg_quality(PIXELS.astype(np.float32) / 255, 90)
    assert adjusted.dtype == tf.uint8 and as_float.dtype == tf.float32
    assert adjusted.op.inputs[0].op.type == "DecodeJpeg"
    assert adjusted.op.inputs[0].op.inputs[0].op.type == "EncodeJpegVariableQuality"
    got = run([adjusted, fed, as_float], {ph: PIXELS, quality: 75})
    np.testing.assert_array_equal(got[0], pillow_jpeg_round_trip(PIXELS, 30))
    np.testing.assert_array_equal(got[1], pillow_jpeg_round_trip(PIXELS, 75))
    # float images go through convert_image_dtype both ways (x * 255.5 truncated, / 255).
    to_uint8 = (PIXELS.astype(np.float32) / 255 * np.float32(255.5)).astype(np.uint8)
    np.testing.assert_allclose(got[2], pillow_jpeg_round_trip(to_uint8, 90) / 255.0,
                               rtol=1e-6)
    assert np.abs(got[0].astype(int) - PIXELS).mean() > np.abs(
        got[1].astype(int) - PIXELS).mean()  # lower quality, larger error
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"quality must be in \[0,100\]"):
        run(fed, {ph: PIXELS, quality: 101})
    with pytest.raises(ValueError, match="Shape must be rank 3 but is rank 4"):
        tf.image.adjust_jpeg_quality(np.zeros([1, 4, 4, 3], np.uint8), 50)
    two = tf.placeholder(tf.uint8, [4, 4, None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="image must have 1 or 3 channels"):
        run(tf.image.adjust_jpeg_quality(two, 50), {two: np.zeros([4, 4, 2], np.uint8)})


def test_random_jpeg_quality():
    with tf.Session() as sess:
        image = tf.constant(PIXELS)
        adjusted = tf.image.random_jpeg_quality(image, 20, 24, seed=3)
        results = [sess.run(adjusted) for _ in range(6)]
    choices = [pillow_jpeg_round_trip(PIXELS, q) for q in range(20, 24)]
    for got in results:
        assert any(np.array_equal(got, c) for c in choices)
    with pytest.raises(ValueError, match="must be between 0 and 100"):
        tf.image.random_jpeg_quality(PIXELS, 50, 101)
    with pytest.raises(ValueError, match="must be less than `max_jpeg_quality`"):
        tf.image.random_jpeg_quality(PIXELS, 50, 50)


def webp_bytes(frames, mode):
    buffer = io.BytesIO()
    images = [Image.fromarray(f, mode) for f in frames]
    images[0].save(buffer, "WEBP", lossless=True, save_all=len(images) > 1,
                   append_images=images[1:], duration=100)
    return buffer.getvalue()


def test_decode_webp():
    rgba = RNG.integers(0, 256, (6, 7, 4), dtype=np.uint8)
    rgba[..., 3] = RNG.integers(1, 256, (6, 7))
    still, with_alpha = webp_bytes([PIXELS], "RGB"), webp_bytes([rgba], "RGBA")
    frames = [np.full((5, 4, 4), 255, np.uint8) for _ in range(3)]
    for i, f in enumerate(frames):
        f[..., :3] = RNG.integers(0, 256, (5, 4, 3))
    animated = webp_bytes(frames, "RGBA")
    contents = tf.placeholder(tf.string, [])
    decoded = tf.image.decode_webp(contents)
    rgb_only = tf.image.decode_webp(contents, channels=3)
    assert decoded.op.type == "DecodeWebP" and decoded.dtype == tf.uint8
    assert decoded.shape.as_list() == [None, None, None, None]
    assert rgb_only.shape.as_list() == [None, None, None, 3]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(decoded, {contents: still}), PIXELS[None])
        np.testing.assert_array_equal(sess.run(rgb_only, {contents: still}), PIXELS[None])
        np.testing.assert_array_equal(sess.run(decoded, {contents: with_alpha}), rgba[None])
        np.testing.assert_array_equal(sess.run(decoded, {contents: animated}), np.stack(frames))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Number of channels requested does not match input"):
            sess.run(rgb_only, {contents: with_alpha})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Unknown image file format"):
            sess.run(decoded, {contents: b"RIFF0000WAVEdata"})
    with pytest.raises(tf.errors.InvalidArgumentError, match="WebP only supports 3 or 4"):
        run(tf.image.decode_webp(still, channels=1))


def test_decode_jxl():
    imagecodecs = pytest.importorskip("imagecodecs")
    gray = RNG.integers(0, 256, (7, 9), dtype=np.uint8)
    rgb_file = imagecodecs.jpegxl_encode(PIXELS, lossless=True)
    gray_file = imagecodecs.jpegxl_encode(gray, lossless=True)
    contents = tf.placeholder(tf.string, [])
    decoded = tf.image.decode_jxl(contents)
    three = tf.image.decode_jxl(contents, channels=3)
    assert decoded.op.type == "DecodeJxl" and three.shape.as_list() == [None, None, 3]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(decoded, {contents: rgb_file}), PIXELS)
        np.testing.assert_array_equal(sess.run(decoded, {contents: gray_file}), gray[..., None])
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Number of channels requested does not match input"):
            sess.run(three, {contents: gray_file})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Failed to decode JXL"):
            sess.run(decoded, {contents: b"not a jpeg xl file"})


def test_decode_jxl_without_imagecodecs_names_the_optional_dependency(monkeypatch):
    monkeypatch.setitem(sys.modules, "imagecodecs", None)  # as if not installed
    decoded = tf.image.decode_jxl(tf.constant(b"\xff\x0a not decoded"))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.UnimplementedError, match=r"tensorflux\[images\]"):
            sess.run(decoded)
