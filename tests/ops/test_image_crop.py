"""tf.image.crop_and_resize (CropAndResize and its two gradient records) and
tf.image.extract_glimpse (ExtractGlimpse, TF1.15's V1 op) against NumPy samplers written
here from TF's kernels, finite differences, and TF's errors."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.ops.op_builder import apply_op
from tests.helpers import run
from tests.ops.harness import numeric_gradient

RNG = np.random.default_rng(7)
IMAGE = RNG.uniform(-1, 1, (2, 4, 5, 2))
# A plain box, a sub-box, a flipped one, one sticking out (extrapolated samples).
BOXES = np.array([[0, 0, 1, 1], [0.13, 0.21, 0.71, 0.87], [0.92, 0.83, 0.08, 0.12],
                  [-0.23, 0.31, 0.57, 1.19]])
BOX_IND = np.array([0, 1, 1, 0], np.int32)


def _source(lo, hi, i, crop, size):
    if crop > 1:
        return lo * (size - 1) + i * (hi - lo) * (size - 1) / (crop - 1)
    return 0.5 * (lo + hi) * (size - 1)


def np_crop_and_resize(image, boxes, box_ind, crop_size, method="bilinear", extrapolation=0.0):
    """TF's CPU kernel, one sample at a time, in float64."""
    crop_h, crop_w = crop_size
    _, height, width, depth = image.shape
    out = np.zeros((len(boxes), crop_h, crop_w, depth))
    for b, (y1, x1, y2, x2) in enumerate(boxes):
        img = image[box_ind[b]]
        for y in range(crop_h):
            in_y = _source(y1, y2, y, crop_h, height)
            for x in range(crop_w):
                in_x = _source(x1, x2, x, crop_w, width)
                if not (0 <= in_y <= height - 1 and 0 <= in_x <= width - 1):
                    out[b, y, x] = extrapolation
                elif method == "nearest":
                    out[b, y, x] = img[int(np.floor(in_y + 0.5)), int(np.floor(in_x + 0.5))]
                else:
                    t, l = int(np.floor(in_y)), int(np.floor(in_x))
                    bo, r = int(np.ceil(in_y)), int(np.ceil(in_x))
                    yl, xl = in_y - t, in_x - l
                    top = img[t, l] + (img[t, r] - img[t, l]) * xl
                    bottom = img[bo, l] + (img[bo, r] - img[bo, l]) * xl
                    out[b, y, x] = top + (bottom - top) * yl
    return out


def test_values_static_shapes_and_methods():
    image = tf.placeholder(tf.float32, [2, 4, 5, 2])
    boxes = tf.placeholder(tf.float32, [4, 4])
    unknown = tf.placeholder(tf.float32, None)
    bilinear = tf.image.crop_and_resize(image, boxes, BOX_IND, [3, 4], extrapolation_value=-2)
    nearest = tf.image.crop_and_resize(image, boxes, BOX_IND, [3, 4], method="nearest")
    single = tf.image.crop_and_resize(image, boxes, BOX_IND, [1, 1])
    new_name = tf.image.crop_and_resize(unknown, boxes, crop_size=[2, 3],
                                        box_indices=BOX_IND)
    uint8 = tf.image.crop_and_resize(tf.constant((IMAGE * 100 + 100).astype(np.uint8)),
                                     BOXES.astype(np.float32), BOX_IND, [3, 4])
    assert bilinear.op.type == "CropAndResize" and bilinear.dtype == tf.float32
    assert bilinear.shape.as_list() == [4, 3, 4, 2]
    assert new_name.shape.as_list() == [4, 2, 3, None]
    feeds = {image: IMAGE, boxes: BOXES, unknown: IMAGE}
    got = run([bilinear, nearest, single, new_name, uint8], feeds)
    img32 = IMAGE.astype(np.float32).astype(np.float64)
    box32 = BOXES.astype(np.float32).astype(np.float64)
    want = [np_crop_and_resize(img32, box32, BOX_IND, (3, 4), extrapolation=-2),
            np_crop_and_resize(img32, box32, BOX_IND, (3, 4), "nearest"),
            np_crop_and_resize(img32, box32, BOX_IND, (1, 1)),
            np_crop_and_resize(img32, box32, BOX_IND, (2, 3)),
            np_crop_and_resize((IMAGE * 100 + 100).astype(np.uint8).astype(np.float64), box32,
                               BOX_IND, (3, 4))]
    for g, w in zip(got, want):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    # The whole image at its own size is the image (corner-aligned sampling).
    np.testing.assert_allclose(
        run(tf.image.crop_and_resize(IMAGE.astype(np.float32), [[0., 0., 1., 1.]], [1],
                                     [4, 5])), IMAGE[1:].astype(np.float32), rtol=1e-6)


def test_gradients_match_finite_differences():
    image = tf.placeholder(tf.float64, [2, 4, 5, 2])
    boxes = tf.placeholder(tf.float32, [4, 4])
    weights = RNG.uniform(0.5, 1.5, (4, 3, 4, 2))
    grads = []
    for method in ("bilinear", "nearest"):
        crops = tf.image.crop_and_resize(image, boxes, BOX_IND, [3, 4], method=method)
        grads.append(tf.gradients(tf.reduce_sum(crops * weights), [image, boxes]))
    assert grads[0][0].op.type == "CropAndResizeGradImage"
    assert grads[0][0].dtype == tf.float64 and grads[0][0].shape.as_list() == [2, 4, 5, 2]
    assert grads[1][1].op.type == "CropAndResizeGradBoxes"
    got = run(grads, {image: IMAGE, boxes: BOXES})
    box32 = BOXES.astype(np.float32).astype(np.float64)
    for (g_image, g_boxes), method in zip(got, ("bilinear", "nearest")):
        def objective(img, bx, method=method):
            return np.sum(weights * np_crop_and_resize(img, bx, BOX_IND, (3, 4), method))
        arrays = [IMAGE.astype(np.float32).astype(np.float64), box32.copy()]
        np.testing.assert_allclose(g_image, numeric_gradient(objective, arrays, 0, 1e-3),
                                   rtol=1e-5, atol=1e-5)
    # The boxes' gradient is the bilinear sampler's derivative, also for "nearest" (TF).
    def bilinear_objective(img, bx):
        return np.sum(weights * np_crop_and_resize(img, bx, BOX_IND, (3, 4)))
    arrays = [IMAGE.astype(np.float32).astype(np.float64), box32.copy()]
    want_boxes = numeric_gradient(bilinear_objective, arrays, 1, 1e-6)
    for _, g_boxes in got:
        # Box 0 samples the image's very edges, where a finite step leaves the image.
        np.testing.assert_allclose(g_boxes[1:], want_boxes[1:], rtol=1e-3, atol=1e-3)


def test_integer_images_get_no_image_gradient():
    image = tf.constant(np.zeros((1, 3, 3, 1), np.int32))
    boxes = tf.constant([[0.1, 0.1, 0.9, 0.9]])
    crops = tf.image.crop_and_resize(image, boxes, [0], [2, 2])
    g_image, g_boxes = tf.gradients(tf.reduce_sum(crops), [image, boxes])
    assert g_image is None and g_boxes is not None


def test_errors():
    image = tf.zeros([2, 4, 5, 2])
    with pytest.raises(ValueError, match="Shape must be rank 4 but is rank 3"):
        tf.image.crop_and_resize(tf.zeros([4, 5, 2]), BOXES, BOX_IND, [2, 2])
    with pytest.raises(ValueError, match="Dimension must be 4 but is 3"):
        tf.image.crop_and_resize(image, tf.zeros([4, 3]), BOX_IND, [2, 2])
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 4 and 3"):
        tf.image.crop_and_resize(image, BOXES.astype(np.float32), [0, 1, 1], [2, 2])
    with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
        tf.image.crop_and_resize(image, BOXES.astype(np.float32), BOX_IND, [2, 2, 2])
    with pytest.raises(ValueError, match="allowed values"):
        tf.image.crop_and_resize(image, BOXES.astype(np.float32), BOX_IND, [2, 2],
                                 method="bicubic")
    with pytest.raises(TypeError):
        tf.image.crop_and_resize(image, tf.zeros([4, 4], tf.float64), BOX_IND, [2, 2])
    box_ind = tf.placeholder(tf.int32, [4])
    crops = tf.image.crop_and_resize(image, BOXES.astype(np.float32), box_ind, [2, 2])
    with pytest.raises(tf.errors.OutOfRangeError,
                       match=r"box_index has values outside \[0, batch_size\)"):
        run(crops, {box_ind: [0, 1, 2, 0]})
    size = tf.placeholder(tf.int32, [2])
    crops = tf.image.crop_and_resize(image, BOXES.astype(np.float32), BOX_IND, size)
    assert crops.shape.as_list() == [4, None, None, 2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="crop dimensions must be positive"):
        run(crops, {size: [0, 2]})


# -- extract_glimpse ---------------------------------------------------------------------------
def np_glimpse(image, size, offsets, centered, normalized, fill=0.0):
    """TF1.15's ExtractGlimpse (version 1): returns the glimpses and the in-image mask."""
    batch, height, width, depth = image.shape
    h, w = size
    out = np.full((batch, h, w, depth), fill, np.float64)
    mask = np.zeros((batch, h, w), bool)
    for i in range(batch):
        y, x = (np.float32(v) for v in offsets[i])
        if normalized:
            y, x = y * np.float32(height), x * np.float32(width)
        if centered:
            y = y / np.float32(2) + np.float32(height / 2)
            x = x / np.float32(2) + np.float32(width / 2)
        y, x = y - np.float32(h / 2), x - np.float32(w / 2)
        top, left = int(np.trunc(y)), int(np.trunc(x))
        for r in range(h):
            for c in range(w):
                if 0 <= top + r < height and 0 <= left + c < width:
                    out[i, r, c] = image[i, top + r, left + c]
                    mask[i, r, c] = True
    return out, mask


def test_glimpse_documented_example_and_modes():
    # TF's own example: a 3x3 image, a 2x2 glimpse at pixel (1, 1), neither centred nor
    # normalized: V1 takes (1, 1) as the glimpse centre, so it starts at (0, 0).
    x = np.arange(9, dtype=np.float32).reshape(1, 3, 3, 1)
    glimpse = tf.image.extract_glimpse(x, size=(2, 2), offsets=[[1.0, 1.0]], centered=False,
                                       normalized=False)
    assert glimpse.op.type == "ExtractGlimpse" and glimpse.shape.as_list() == [1, 2, 2, 1]
    np.testing.assert_array_equal(run(glimpse)[0, :, :, 0], [[0, 1], [3, 4]])

    image = RNG.uniform(-1, 1, (3, 6, 7, 2)).astype(np.float32)
    offsets = np.array([[0.3, -0.4], [-0.9, 0.95], [0.1, 0.2]], np.float32)
    pixel_offsets = np.array([[2.5, 3.7], [-1.2, 5.9], [6.5, 0.4]], np.float32)
    ph = tf.placeholder(tf.float32, [None, None, None, 2])
    cases = [((4, 3), offsets, True, True), ((4, 3), offsets * 0.5 + 0.5, False, True),
             ((3, 5), pixel_offsets, False, False), ((3, 5), pixel_offsets - 3, True, False),
             ((2, 2), offsets, True, True)]
    built = [apply_op("ExtractGlimpse", input=ph, size=list(size), offsets=offs,
                      centered=centered, normalized=normalized, uniform_noise=False,
                      noise="zero") for size, offs, centered, normalized in cases]
    got = run(built, {ph: image})
    for g, (size, offs, centered, normalized) in zip(got, cases):
        want, _ = np_glimpse(image, size, offs, centered, normalized)
        np.testing.assert_array_equal(g, want.astype(np.float32))


def test_glimpse_noise_fills_outside_the_image():
    image = RNG.uniform(2, 5, (2, 5, 5, 3)).astype(np.float32)
    offsets = np.array([[0.9, 0.9], [-1.0, 0.0]], np.float32)  # half outside the image
    uniform = tf.image.extract_glimpse(image, [4, 4], offsets)
    # TF's kernel lets a non-empty `noise` win: the op's default "uniform" ignores
    # uniform_noise=False ...
    also_uniform = tf.image.extract_glimpse(image, [4, 4], offsets, uniform_noise=False)
    # ... and noise="" with uniform_noise=False is gaussian (per channel, clipped).
    gaussian = apply_op("ExtractGlimpse", input=image, size=[4, 4], offsets=offsets,
                        uniform_noise=False, noise="")
    u, u2, g = run([uniform, also_uniform, gaussian])
    want, inside = np_glimpse(image.astype(np.float64), (4, 4), offsets, True, True)
    assert inside.any() and (~inside).any()
    for got in (u, u2, g):
        np.testing.assert_array_equal(got[inside], want[inside].astype(np.float32))
    for b in range(2):
        outside = ~inside[b]
        lo, hi = image[b].min(), image[b].max()
        assert np.all((u[b][outside] >= lo) & (u[b][outside] <= hi))
        assert len(np.unique(u[b][outside])) > 10  # noise, not a constant
        for c in range(3):
            lo_c, hi_c = image[b, ..., c].min(), image[b, ..., c].max()
            assert np.all((g[b, ..., c][outside] >= lo_c) & (g[b, ..., c][outside] <= hi_c))


def test_glimpse_errors():
    image = tf.zeros([2, 5, 5, 1])
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.image.extract_glimpse(image, [2, 2], tf.zeros([3, 2]))
    with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
        tf.image.extract_glimpse(image, [2, 2], tf.zeros([2, 3]))
    with pytest.raises(ValueError, match="Shape must be rank 4 but is rank 3"):
        tf.image.extract_glimpse(tf.zeros([5, 5, 1]), [2, 2], tf.zeros([1, 2]))
    with pytest.raises(ValueError, match="uniform_noise and noise should not be specified"):
        apply_op("ExtractGlimpse", input=image, size=[2, 2], offsets=tf.zeros([2, 2]),
                 uniform_noise=True, noise="gaussian")
