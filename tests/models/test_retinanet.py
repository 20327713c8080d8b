"""RetinaNet: anchors, box coding, target assignment, losses and detection against values
worked by hand or NumPy formulas written here; the network's shapes, parameter count and
a training step.

Speed (the file's budget is 45 s on 2 CPU cores): compiling ResNet-50 alone costs more
than that, so the full model is only built (static shapes, parameter count) and its
forward pass is opt-in (TENSORFLUX_FULL_MODELS=1). Runs use a stand-in backbone (pooled
1x1 convs giving C3..C5): the full-size FPN and heads for forward + detect, a narrow head
for training. Sessions pin XLA's options so each graph compiles once instead of once per
tuning candidate.
"""

import math
import os

import numpy as np
import pytest

import tensorflux as tf
from tensorflux import models
from tensorflux._src.runtime.config import compiler_options_config
from tensorflux.models import retinanet as R

# One set of XLA options, so a graph compiles once (no per-cluster tuning runs).
# Library dot fusion: XLA:CPU compiles ResNet-50 ~8x faster with it than with its defaults.
ONE_COMPILE = compiler_options_config(
    {"xla_cpu_experimental_ynn_fusion_type": "LIBRARY_FUSION_TYPE_DOT"})


def session():
    return tf.Session(config=ONE_COMPILE)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


# -- anchors ----------------------------------------------------------------------------------
def test_anchors_of_a_16x16_image_by_hand():
    anchors = R.generate_anchors((16, 16))
    # Feature maps: level 3 is 2x2 (stride 8), levels 4..7 are 1x1 (ceil-halving).
    assert anchors.shape == ((4 + 1 + 1 + 1 + 1) * 9, 4) and anchors.dtype == np.float32
    # Level 3, cell (0, 0): centre (4, 4); scale 2^0, ratio 0.5 (h/w): side 4 * 8 = 32,
    # h = 32 * sqrt(0.5) = 22.627, w = 32 / sqrt(0.5) = 45.255.
    h, w = 32 * math.sqrt(0.5), 32 / math.sqrt(0.5)
    np.testing.assert_allclose(anchors[0], [4 - h / 2, 4 - w / 2, 4 + h / 2, 4 + w / 2],
                               rtol=1e-6)
    np.testing.assert_allclose(anchors[1], [-12, -12, 20, 20])          # ratio 1
    side = 32 * 2 ** (1 / 3)                                            # scale 2^(1/3)
    np.testing.assert_allclose(anchors[4], [4 - side / 2] * 2 + [4 + side / 2] * 2, rtol=1e-6)
    # Cell (0, 1) comes next (row-major): centre (4, 12).
    np.testing.assert_allclose(anchors[9 + 1], [-12, -4, 20, 28])
    # Level 4 starts after 4 * 9 anchors: centre (8, 8), side 4 * 16 = 64.
    np.testing.assert_allclose(anchors[36 + 1], [-24, -24, 40, 40])
    # Level 7: stride 128, side 512, centre (64, 64).
    np.testing.assert_allclose(anchors[-9 + 1], [-192, -192, 320, 320])
    # Every anchor keeps its scale's area: side^2 for 9 anchors of a cell.
    areas = (anchors[:9, 2] - anchors[:9, 0]) * (anchors[:9, 3] - anchors[:9, 1])
    np.testing.assert_allclose(areas, np.repeat([32.0 ** 2 * 2 ** (2 * k / 3) for k in range(3)], 3),
                               rtol=1e-5)


def test_anchor_count_matches_the_network_output():
    # 640x640: (80^2 + 40^2 + 20^2 + 10^2 + 5^2) * 9 anchors.
    assert len(R.generate_anchors((640, 640))) == (6400 + 1600 + 400 + 100 + 25) * 9


# -- boxes ------------------------------------------------------------------------------------
def test_encode_by_hand():
    # Anchor centre (5, 5), 10x10; box centre (7, 14), 10 high, 20 wide.
    got = R.encode_boxes([[2, 4, 12, 24]], [[0, 0, 10, 10]])
    np.testing.assert_allclose(got, [[0.2, 0.9, 0.0, math.log(2)]], rtol=1e-6)


def test_decode_by_hand_and_round_trip():
    rng = np.random.default_rng(0)
    anchors = np.concatenate([rng.uniform(0, 50, (20, 2)), np.zeros((20, 2))], 1)
    anchors[:, 2:] = anchors[:, :2] + rng.uniform(4, 40, (20, 2))
    boxes = np.concatenate([rng.uniform(0, 50, (20, 2)), np.zeros((20, 2))], 1)
    boxes[:, 2:] = boxes[:, :2] + rng.uniform(4, 40, (20, 2))
    by_hand = R.decode_boxes([[0.2, 0.9, 0.0, math.log(2)]], [[0, 0, 10, 10]])
    round_trip = R.decode_boxes(R.encode_boxes(boxes, anchors), anchors.astype(np.float32))
    with session() as sess:
        got_hand, got_trip = sess.run([by_hand, round_trip])
    np.testing.assert_allclose(got_hand, [[2, 4, 12, 24]], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_trip, boxes, rtol=1e-4, atol=1e-4)


def test_iou_by_hand():
    iou = R.iou_matrix([[0, 0, 2, 2], [0, 0, 1, 1]], [[1, 1, 3, 3], [0, 0, 2, 2], [5, 5, 6, 6]])
    np.testing.assert_allclose(iou, [[1 / 7, 1, 0], [0, 0.25, 0]])


# -- target assignment ------------------------------------------------------------------------
ANCHORS = np.array([
    [0, 0, 10, 10],     # IoU 1 with box 0: positive, class 3, zero deltas
    [0, 2, 10, 12],     # IoU 80/120 = 0.67 with box 0: positive, tx = (5 - 7) / 10
    [0, 4, 10, 14],     # IoU 60/140 = 0.43: between 0.4 and 0.5, ignored
    [0, 6, 10, 16],     # IoU 40/160 = 0.25: background
    [20, 24, 30, 34],   # IoU 0.43 with box 1, but its best anchor: positive when forced
    [50, 50, 60, 60],   # overlaps nothing: background
], np.float32)
GT_BOXES = [[0, 0, 10, 10], [20, 20, 30, 30], [0, 0, 0, 0]]
GT_CLASSES = [3, 1, -1]  # the last row is padding


def test_assign_targets_by_hand():
    cls, box = R.assign_targets(ANCHORS, GT_BOXES, GT_CLASSES)
    assert cls.dtype == np.int32 and box.dtype == np.float32
    assert cls.tolist() == [3, 3, R.IGNORE, R.BACKGROUND, 1, R.BACKGROUND]
    np.testing.assert_allclose(box[0], 0)
    np.testing.assert_allclose(box[1], [0, -0.2, 0, 0], atol=1e-7)
    np.testing.assert_allclose(box[4], [0, -0.4, 0, 0], atol=1e-7)  # (25 - 29) / 10
    np.testing.assert_allclose(box[[2, 3, 5]], 0)


def test_assign_targets_without_forced_matches_and_without_boxes():
    config = R.RetinaNetConfig(match_best_anchor=False)
    cls, _ = R.assign_targets(ANCHORS, GT_BOXES, GT_CLASSES, config)
    assert cls.tolist() == [3, 3, R.IGNORE, R.BACKGROUND, R.IGNORE, R.BACKGROUND]
    cls, box = R.assign_targets(ANCHORS, np.zeros((0, 4)), [])
    assert (cls == R.BACKGROUND).all() and (box == 0).all()
    batch_cls, batch_box = R.assign_batch_targets(ANCHORS, [GT_BOXES, GT_BOXES],
                                                  [GT_CLASSES, [-1, -1, -1]])
    assert batch_cls.shape == (2, 6) and batch_box.shape == (2, 6, 4)
    assert (batch_cls[1] == R.BACKGROUND).all()


# -- losses -----------------------------------------------------------------------------------
def numpy_focal(logits, targets, num_classes, alpha=0.25, gamma=2.0):
    y = (targets[..., None] == np.arange(num_classes)).astype(np.float64)
    p = sigmoid(logits)
    ce = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    p_t = np.where(y == 1, p, 1 - p)
    alpha_t = np.where(y == 1, alpha, 1 - alpha)
    return alpha_t * (1 - p_t) ** gamma * ce * (targets != -2)[..., None]


def numpy_huber(error, delta):
    a = np.abs(error)
    return np.where(a <= delta, 0.5 * a ** 2, delta * (a - 0.5 * delta))


def test_focal_and_detection_loss_against_numpy():
    rng = np.random.default_rng(1)
    logits = rng.normal(0, 3, (2, 6, 3))
    targets = np.array([[0, 2, -1, -2, -1, 1], [-1, -1, -2, 0, -1, -1]], np.int32)
    deltas = rng.normal(0, 0.2, (2, 6, 4))
    box_targets = rng.normal(0, 0.2, (2, 6, 4)) * (targets >= 0)[..., None]
    config = R.RetinaNetConfig()
    outputs = {"class_logits": tf.constant(logits, tf.float32),
               "box_deltas": tf.constant(deltas, tf.float32)}
    per_element = R.focal_loss(outputs["class_logits"], tf.constant(targets), 3)
    total, cls_loss, box_loss = R.detection_loss(outputs, tf.constant(targets),
                                                 tf.constant(box_targets, tf.float32), config, 3)
    with session() as sess:
        got = sess.run([per_element, total, cls_loss, box_loss])
    expected = numpy_focal(logits, targets, 3)
    np.testing.assert_allclose(got[0], expected, rtol=1e-4, atol=1e-6)
    positives = (targets >= 0).sum()  # 4
    want_cls = expected.sum() / positives
    want_box = (numpy_huber(deltas - box_targets, 0.1)
                * (targets >= 0)[..., None]).sum() / (4 * positives)
    np.testing.assert_allclose(got[2], want_cls, rtol=1e-4)
    np.testing.assert_allclose(got[3], want_box, rtol=1e-4)
    np.testing.assert_allclose(got[1], want_cls + 50 * want_box, rtol=1e-4)


def test_focal_loss_down_weights_easy_examples():
    # A confident correct negative (p = 0.01) costs (1 - alpha) * p^2 * CE, 10^4 times less
    # than its cross-entropy; a hard one (p = 0.9 on a negative) keeps most of it.
    logits = np.array([[[math.log(0.01 / 0.99)], [math.log(0.9 / 0.1)]]])
    got = R.focal_loss(tf.constant(logits, tf.float32), tf.constant([[-1, -1]]), 1)
    with session() as sess:
        easy, hard = sess.run(got).reshape(-1)
    np.testing.assert_allclose(easy, 0.75 * 0.01 ** 2 * -math.log(0.99), rtol=1e-4)
    np.testing.assert_allclose(hard, 0.75 * 0.9 ** 2 * -math.log(0.1), rtol=1e-4)


# -- the network ------------------------------------------------------------------------------
def resnet50_backbone_params():
    """Conv kernels (no biases) and batch-norm gamma/beta of ResNet-50 without its FC head."""
    conv = lambda k, cin, cout: k * k * cin * cout  # noqa: E731
    total = conv(7, 3, 64) + 2 * 64
    channels = 64
    for blocks, width in ((3, 64), (4, 128), (6, 256), (3, 512)):
        for block in range(blocks):
            out = 4 * width
            total += conv(1, channels, width) + conv(3, width, width) + conv(1, width, out)
            total += 2 * (width + width + out)
            if block == 0:
                total += conv(1, channels, out) + 2 * out  # projection shortcut
            channels = out
    return total


def retinanet_head_params(num_classes, p6_channels=2048):
    conv = lambda k, cin, cout: k * k * cin * cout + cout  # noqa: E731 (with bias)
    fpn = conv(1, 512, 256) + conv(1, 1024, 256) + conv(1, 2048, 256)   # laterals
    fpn += 3 * conv(3, 256, 256)                                        # P3..P5 outputs
    fpn += conv(3, p6_channels, 256) + conv(3, 256, 256)                # P6, P7
    subnets = 2 * 4 * conv(3, 256, 256)                                 # shared by levels
    predictors = conv(3, 256, 9 * num_classes) + conv(3, 256, 9 * 4)
    return fpn + subnets + predictors


def trainable_count():
    return sum(int(np.prod(v.shape.as_list())) for v in tf.trainable_variables())


def test_retinanet50_parameter_count():
    spec = models.get("retinanet50")
    assert spec.kind == "detector" and spec.num_classes == 80
    assert spec.input_shape == (640, 640, 3)
    assert resnet50_backbone_params() == 23_508_032  # ResNet-50's 25.56M less its FC layer
    models.build("retinanet50", tf.placeholder(tf.float32, [1, 64, 64, 3]))
    assert trainable_count() == resnet50_backbone_params() + retinanet_head_params(80)
    assert trainable_count() == 37_968_692


def test_p6_from_p5_gives_the_34m_of_the_reference_implementations():
    models.build("retinanet50", tf.placeholder(tf.float32, [1, 64, 64, 3]), p6_input="P5")
    assert trainable_count() == resnet50_backbone_params() + retinanet_head_params(80, 256)
    assert trainable_count() == 33_839_924


def test_full_model_static_shapes():
    images = tf.placeholder(tf.float32, [2, 64, 64, 3])
    outputs = models.build("retinanet50", images, num_classes=80)
    # Levels 3..7 of 64x64: 8x8, 4x4, 2x2, 1x1, 1x1 (ceil-halving, as the anchors assume).
    for level, size in zip(range(3, 8), (8, 4, 2, 1, 1)):
        assert outputs["class_outputs"][level].shape.as_list() == [2, size, size, 9 * 80]
        assert outputs["box_outputs"][level].shape.as_list() == [2, size, size, 9 * 4]
    num_anchors = len(R.generate_anchors((64, 64)))
    assert num_anchors == (64 + 16 + 4 + 1 + 1) * 9
    assert outputs["class_logits"].shape.as_list() == [2, num_anchors, 80]
    assert outputs["box_deltas"].shape.as_list() == [2, num_anchors, 4]


def run_forward_and_detect(images_shape, outputs, images):
    """Initializes, runs the outputs and detect() in one Session.run, checks the shapes."""
    num_anchors = len(R.generate_anchors(images_shape[1:3]))
    detections = R.detect(outputs, images_shape[1:3], num_classes=80)
    with session() as sess:
        sess.run(tf.global_variables_initializer())
        logits, deltas, got = sess.run(
            [outputs["class_logits"], outputs["box_deltas"], detections],
            {images: np.random.default_rng(0).uniform(0, 1, images_shape)})
    batch = images_shape[0]
    assert logits.shape == (batch, num_anchors, 80) and deltas.shape == (batch, num_anchors, 4)
    # The classifier starts near the prior: sigmoid(logit) ~ 0.01 < the 0.05 threshold,
    # so an untrained model detects nothing.
    np.testing.assert_allclose(sigmoid(logits).mean(), 0.01, rtol=0.2)
    assert got["boxes"].shape == (batch, 100, 4) and got["scores"].shape == (batch, 100)
    assert got["classes"].shape == (batch, 100) and got["num_detections"].shape == (batch,)
    assert got["num_detections"].tolist() == [0] * batch


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("TENSORFLUX_FULL_MODELS"),
                    reason="compiling ResNet-50 takes minutes on 2 CPU cores; "
                           "set TENSORFLUX_FULL_MODELS=1 (tests/models/test_resnet_squeezenet.py "
                           "runs the backbone's forward pass)")
def test_full_model_forward_and_detect_on_64x64():
    tf.set_random_seed(0)
    images = tf.placeholder(tf.float32, [1, 64, 64, 3])
    run_forward_and_detect((1, 64, 64, 3), models.build("retinanet50", images), images)


# -- training and inference on a stand-in backbone --------------------------------------------
# Levels 3..5 only, 8 channels, one conv per subnet: a tenth of the full head's convs.
SMALL = R.RetinaNetConfig(max_level=5, fpn_channels=8, head_convs=1, pre_nms_top_k=50)


def standin_features(images, training):
    """C3..C5 at strides 8/16/32 from pooled 1x1 convs: cheap to compile."""
    del training
    features = {}
    for level, channels in ((3, 8), (4, 8), (5, 16)):
        window = [1, 2 ** level, 2 ** level, 1]
        pooled = tf.nn.avg_pool(images, window, window, "SAME")
        features[f"C{level}"] = tf.layers.conv2d(pooled, channels, 1, activation=tf.nn.relu,
                                                 name=f"standin_c{level}")
    return features


def test_forward_and_detect_on_a_standin_backbone():
    # P3..P7, 9 anchors and 80 classes through detect(), with a narrower FPN and subnets
    # (the width does not change the wiring) and a stand-in backbone, to compile quickly.
    tf.set_random_seed(0)
    images = tf.placeholder(tf.float32, [2, 64, 64, 3])
    config = R.RetinaNetConfig(fpn_channels=32, head_convs=2)
    outputs = R.build_from_features(standin_features(images, False), config, num_classes=80)
    run_forward_and_detect((2, 64, 64, 3), outputs, images)


def test_training_steps_reduce_the_loss_on_a_fixed_batch():
    tf.set_random_seed(1)
    rng = np.random.default_rng(2)
    images = rng.uniform(0, 1, (2, 64, 64, 3)).astype(np.float32)
    gt_boxes = [[[8, 8, 40, 40], [30, 20, 60, 44]], [[0, 32, 24, 64], [0, 0, 0, 0]]]
    gt_classes = [[0, 2], [1, -1]]
    anchors = R.generate_anchors((64, 64), SMALL)
    cls_targets, box_targets = R.assign_batch_targets(anchors, gt_boxes, gt_classes, SMALL)
    assert (cls_targets >= 0).sum() >= 3
    x = tf.constant(images)
    spec = R.model_fn(x, {"cls_targets": tf.constant(cls_targets),
                          "box_targets": tf.constant(box_targets)}, R.TRAIN,
                      {"num_classes": 3, "config": SMALL, "feature_fn": standin_features,
                       "learning_rate": 0.02})
    assert spec.mode == R.TRAIN and spec.train_op is not None
    losses = []
    with session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(5):
            loss, _ = sess.run([spec.loss, spec.train_op])  # loss before this step's update
            losses.append(loss)
    assert np.all(np.isfinite(losses))
    assert np.all(np.diff(losses) < 0), losses  # every step lowers the loss


def test_detect_hand_built_case():
    # One level (stride 8) of a 16x16 image, one 8x8 anchor per cell, two classes:
    # anchors [0,0,8,8], [0,8,8,16], [8,0,16,8], [8,8,16,16].
    config = R.RetinaNetConfig(min_level=3, max_level=3, num_scales=1, aspect_ratios=(1.0,),
                               anchor_scale=1.0, max_detections=5)
    np.testing.assert_allclose(R.generate_anchors((16, 16), config),
                               [[0, 0, 8, 8], [0, 8, 8, 16], [8, 0, 16, 8], [8, 8, 16, 16]])
    logit = lambda p: math.log(p / (1 - p))  # noqa: E731
    logits = np.full((1, 2, 2, 2), -10.0)         # (batch, row, col, anchor * class)
    deltas = np.zeros((1, 2, 2, 4))
    logits[0, 0, 0, 0] = logit(0.9)   # anchor 0, class 0
    logits[0, 0, 1, 0] = logit(0.8)   # anchor 1, class 0, moved onto anchor 0: suppressed
    logits[0, 0, 1, 1] = logit(0.7)   # the same box for class 1: kept (per-class NMS)
    deltas[0, 0, 1] = [0, -1, 0, 0]   # tx = -1: one anchor width left
    logits[0, 1, 0, 0] = logit(0.6)   # anchor 2, class 0: kept as is
    logits[0, 1, 1, 1] = logit(0.65)  # anchor 3, class 1: 4x taller, clipped to the image
    deltas[0, 1, 1] = [0, 0, math.log(4), 0]
    logits[0, 0, 0, 1] = logit(0.04)  # below the 0.05 score threshold: dropped
    outputs = {"class_outputs": {3: tf.constant(logits, tf.float32)},
               "box_outputs": {3: tf.constant(deltas, tf.float32)}}
    detections = R.detect(outputs, (16, 16), config, num_classes=2)
    with session() as sess:
        got = sess.run(detections)
    assert got["num_detections"].tolist() == [4]
    np.testing.assert_allclose(got["scores"][0], [0.9, 0.7, 0.65, 0.6, 0], rtol=1e-5)
    assert got["classes"][0].tolist() == [0, 1, 1, 0, 0]
    np.testing.assert_allclose(got["boxes"][0], [[0, 0, 8, 8], [0, 0, 8, 8], [0, 8, 16, 16],
                                                 [8, 0, 16, 8], [0, 0, 0, 0]], atol=1e-4)


def test_detect_needs_a_static_batch():
    outputs = {"class_outputs": {3: tf.placeholder(tf.float32, [None, 2, 2, 2])},
               "box_outputs": {3: tf.placeholder(tf.float32, [None, 2, 2, 4])}}
    config = R.RetinaNetConfig(min_level=3, max_level=3, num_scales=1, aspect_ratios=(1.0,))
    with pytest.raises(ValueError, match="static batch size"):
        R.detect(outputs, (16, 16), config, num_classes=2)


def test_model_fn_predict_mode_returns_detections():
    images = tf.zeros([2, 64, 64, 3])
    spec = R.model_fn(images, None, R.PREDICT,
                      {"num_classes": 3, "config": SMALL, "feature_fn": standin_features})
    assert spec.loss is None and spec.train_op is None
    assert spec.predictions["boxes"].shape.as_list() == [2, 100, 4]
    assert spec.predictions["num_detections"].shape.as_list() == [2]
