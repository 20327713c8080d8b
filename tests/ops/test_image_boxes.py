"""tf.image.draw_bounding_boxes (DrawBoundingBoxes / DrawBoundingBoxesV2) against a NumPy
transcription of TF's drawing loop, and tf.image.sample_distorted_bounding_box
(SampleDistortedBoundingBoxV2) against the constraints TF's sampler guarantees."""

import numpy as np
import pytest

import tensorflux as tf
from tests.helpers import run

TABLE = np.array([[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1],
                  [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1],
                  [1, 0, 1, 1]])


def np_draw(images, boxes, colors=TABLE):
    out = images.copy()
    _, height, width, depth = images.shape
    for b in range(images.shape[0]):
        for i, (y0, x0, y1, x1) in enumerate(boxes[b]):
            color = colors[i % len(colors)][:depth]
            top, bottom = int(np.float32(y0) * (height - 1)), int(np.float32(y1) * (height - 1))
            left, right = int(np.float32(x0) * (width - 1)), int(np.float32(x1) * (width - 1))
            if top > bottom or left > right:
                continue
            if top >= height or bottom < 0 or left >= width or right < 0:
                continue
            c0, c1 = max(left, 0), min(right, width - 1)
            r0, r1 = max(top, 0), min(bottom, height - 1)
            if top >= 0:
                out[b, top, c0:c1 + 1] = color
            if bottom < height:
                out[b, bottom, c0:c1 + 1] = color
            if left >= 0:
                out[b, r0:r1 + 1, left] = color
            if right < width:
                out[b, r0:r1 + 1, right] = color
    return out


BOXES = np.array([[[0.1, 0.2, 0.8, 0.7], [0.0, 0.0, 1.0, 1.0], [-0.3, 0.4, 0.6, 1.5],
                   [0.5, 0.5, 0.2, 0.9], [1.5, 0.1, 1.9, 0.3], [0.3, 0.3, 0.35, 0.95]],
                  [[0.25, 0.25, 0.75, 0.75], [0.6, -0.2, 0.9, 0.45], [0.05, 0.1, 0.5, 0.2],
                   [0.2, 0.2, 0.6, 0.6], [0.0, 0.9, 0.3, 1.0], [0.4, 0.1, 0.4, 0.8]]],
                 np.float32)


def test_draw_matches_tf_drawing_loop():
    images = np.random.default_rng(3).uniform(0.2, 0.8, (2, 9, 11, 3)).astype(np.float32)
    ph = tf.placeholder(tf.float32, [None, None, None, 3])
    gray = tf.placeholder(tf.float16, [2, 9, 11, 1])
    colors = np.array([[0.25, 0.5, 0.75, 1.0], [0.9, 0.1, 0.3, 0.0]], np.float32)
    drawn = tf.image.draw_bounding_boxes(ph, BOXES)
    drawn_gray = tf.image.draw_bounding_boxes(gray, BOXES)
    colored = tf.image.draw_bounding_boxes(ph, BOXES, colors=colors)
    empty_colors = tf.image.draw_bounding_boxes(ph, BOXES, colors=np.zeros([0, 3], np.float32))
    assert drawn.op.type == "DrawBoundingBoxes" and colored.op.type == "DrawBoundingBoxesV2"
    assert drawn_gray.dtype == tf.float16 and drawn_gray.shape.as_list() == [2, 9, 11, 1]
    got = run([drawn, drawn_gray, colored, empty_colors],
              {ph: images, gray: images[..., :1].astype(np.float16)})
    np.testing.assert_array_equal(got[0], np_draw(images, BOXES).astype(np.float32))
    np.testing.assert_array_equal(got[1], np_draw(images[..., :1].astype(np.float16), BOXES))
    np.testing.assert_array_equal(got[2], np_draw(images, BOXES, colors).astype(np.float32))
    np.testing.assert_array_equal(got[3], got[0])
    # Hand-checked: image 1's box 0 has its bottom edge on row 0.75 * 8 = 6, columns
    # 0.25 * 10 -> 2 to 7.5 -> 7, in yellow, crossed at column 4 by box 1's right edge
    # (0.45 * 10 -> 4, rows 4 to 7) in blue.
    np.testing.assert_array_equal(got[0][1, 6, [2, 3, 5, 6, 7]], [[1, 1, 0]] * 5)
    np.testing.assert_array_equal(got[0][1, 6, 4], [0, 0, 1])


def test_draw_errors():
    with pytest.raises(ValueError, match="Channel depth should be either 1"):
        tf.image.draw_bounding_boxes(tf.zeros([1, 4, 4, 2]), tf.zeros([1, 1, 4]))
    with pytest.raises(ValueError, match="Dimension must be 4 but is 3"):
        tf.image.draw_bounding_boxes(tf.zeros([1, 4, 4, 3]), tf.zeros([1, 1, 3]))
    with pytest.raises(ValueError, match="Shape must be rank 3 but is rank 2"):
        tf.image.draw_bounding_boxes(tf.zeros([1, 4, 4, 3]), tf.zeros([1, 4]))
    with pytest.raises(TypeError):
        tf.image.draw_bounding_boxes(tf.zeros([1, 4, 4, 3], tf.int32), tf.zeros([1, 1, 4]))
    boxes = tf.placeholder(tf.float32, [None, 1, 4])
    drawn = tf.image.draw_bounding_boxes(tf.zeros([1, 4, 4, 3]), boxes)
    with pytest.raises(tf.errors.InvalidArgumentError, match="The batch sizes should be the same"):
        run(drawn, {boxes: np.zeros([2, 1, 4])})
    colors = tf.placeholder(tf.float32, [None, None])
    drawn = tf.image.draw_bounding_boxes(tf.zeros([1, 4, 4, 3]), tf.zeros([1, 1, 4]),
                                         colors=colors)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="colors must have equal or more channels"):
        run(drawn, {colors: np.zeros([2, 2])})


# -- sample_distorted_bounding_box -------------------------------------------------------------
def _covered(begin, size, box, height, width):
    y0, x0 = begin[:2]
    h, w = size[:2]
    by0, bx0 = int(np.float32(box[0]) * height), int(np.float32(box[1]) * width)
    by1, bx1 = int(np.float32(box[2]) * height), int(np.float32(box[3]) * width)
    ih = max(0, min(y0 + h, by1) - max(y0, by0))
    iw = max(0, min(x0 + w, bx1) - max(x0, bx0))
    return ih * iw / ((by1 - by0) * (bx1 - bx0))


def test_samples_satisfy_tf_constraints():
    height, width = 120, 90
    boxes = np.array([[[0.1, 0.2, 0.6, 0.7], [0.5, 0.05, 0.9, 0.35]]], np.float32)
    image_size = tf.constant([height, width, 3])
    outs = [tf.image.sample_distorted_bounding_box(
        image_size, boxes, seed=1, seed2=i, min_object_covered=0.4,
        aspect_ratio_range=(0.5, 2.0), area_range=(0.1, 0.6)) for i in range(1, 5)]
    begin, size, bbox = outs[0]
    assert begin.op.type == "SampleDistortedBoundingBoxV2"
    assert begin.dtype == tf.int32 and begin.shape.as_list() == [3]
    assert bbox.shape.as_list() == [1, 1, 4]
    with tf.Session() as sess:  # every run draws again
        results = [r for _ in range(10) for r in sess.run(outs)]
    for begin, size, bbox in results:
        assert begin[2] == 0 and size[2] == -1
        h, w = size[:2]
        y0, x0 = begin[:2]
        assert 0 <= y0 and y0 + h <= height and 0 <= x0 and x0 + w <= width
        if (h, w) == (height, width):
            continue  # no attempt succeeded: the whole image
        # width = round(height * ratio) with ratio in [0.5, 2.0], area in the range.
        assert 0.5 * h - 0.5 <= w <= 2.0 * h + 0.5
        assert 0.1 * height * width <= h * w <= 0.6 * height * width
        assert max(_covered(begin, size, b, height, width) for b in boxes[0]) >= 0.4
        np.testing.assert_allclose(
            bbox[0, 0], np.float32([y0 / height, x0 / width, (y0 + h) / height,
                                    (x0 + w) / width]), rtol=1e-7)
    crops = {(tuple(b), tuple(s)) for b, s, _ in results}
    assert len(crops) > 20  # different seeds, different crops


def test_seeds_and_fallback():
    image_size = tf.constant([50, 60, 3], tf.int64)
    boxes = tf.constant([[[0.2, 0.2, 0.5, 0.5]]])
    seeded = tf.image.sample_distorted_bounding_box(image_size, boxes, seed=5, seed2=7)
    unseeded = tf.image.sample_distorted_bounding_box(image_size, boxes)
    # No crop of at most 10% of the image covers all of a box of 9% of it... except
    # one that fits it exactly; with min_object_covered=1 and area <= 5% none can.
    impossible = tf.image.sample_distorted_bounding_box(
        image_size, boxes, seed=1, seed2=1, min_object_covered=1.0, area_range=(0.01, 0.05),
        max_attempts=20)
    no_boxes = tf.image.sample_distorted_bounding_box(
        image_size, tf.zeros([1, 0, 4]), seed=2, seed2=3, use_image_if_no_bounding_boxes=True,
        min_object_covered=0.0)
    with tf.Session() as sess:
        first = sess.run([seeded, unseeded, impossible, no_boxes])
    with tf.Session() as sess:
        fresh = sess.run([seeded, unseeded])
    assert first[0][0].dtype == np.int64
    np.testing.assert_array_equal(fresh[0][0], first[0][0])  # same seeds, same first draw
    np.testing.assert_array_equal(fresh[0][1], first[0][1])
    begin, size, bbox = first[2]
    np.testing.assert_array_equal(begin, [0, 0, 0])
    np.testing.assert_array_equal(size, [50, 60, -1])
    np.testing.assert_array_equal(bbox, [[[0, 0, 1, 1]]])
    assert first[3][1][0] * first[3][1][1] >= 0.05 * 50 * 60


def test_sampler_errors():
    boxes = tf.placeholder(tf.float32, [1, None, 4])
    sample = tf.image.sample_distorted_bounding_box([10, 10, 3], boxes, seed=1, seed2=1)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"All bounding box coordinates must be in \[0.0, 1.0\]: 1.5"):
        run(sample, {boxes: [[[0.1, 0.1, 1.5, 0.5]]]})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="No bounding boxes provided as input"):
        run(sample, {boxes: np.zeros([1, 0, 4])})
    covered = tf.placeholder(tf.float32, [])
    sample = tf.image.sample_distorted_bounding_box([10, 10, 3], [[[0., 0., 1., 1.]]],
                                                    min_object_covered=covered)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Min object covered must be non-negative: -0.5"):
        run(sample, {covered: -0.5})
    with pytest.raises(ValueError, match="Dimension must be 3 but is 2"):
        tf.image.sample_distorted_bounding_box([10, 10], [[[0., 0., 1., 1.]]])
    with pytest.raises(ValueError, match="Shape must be rank 3 but is rank 2"):
        tf.image.sample_distorted_bounding_box([10, 10, 3], [[0., 0., 1., 1.]])
    sample = tf.image.sample_distorted_bounding_box([10, 10, 3], [[[0., 0., 1., 1.]]],
                                                    area_range=[0.0, 0.5])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Area range must be non-negative"):
        run(sample)
