"""tf.image.non_max_suppression (NonMaxSuppressionV3, a host kernel) against hand-worked
cases and the behaviour TF documents and tests (core/kernels/non_max_suppression_op.cc).
"""

import numpy as np
import pytest

import tensorflux as tf
from tests.helpers import run

# TF's own test boxes: three clusters, around x=0, x=10 and x=100 (unit-height boxes).
CLUSTERS = np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9],
                     [0, 10, 1, 11], [0, 10.1, 1, 11.1], [0, 100, 1, 101]], np.float32)
CLUSTER_SCORES = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3], np.float32)


def nms(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=float("-inf")):
    return run(tf.image.non_max_suppression(
        tf.constant(boxes, tf.float32), tf.constant(scores, tf.float32), max_output_size,
        iou_threshold, score_threshold))


def test_hand_worked_example():
    # Box 1 overlaps box 0 by IoU 0.9/1.1 = 0.82 (> 0.5): suppressed. Box 2 overlaps box 0
    # by 0.5/1.5 = 0.33: kept. Selection is by score: 0 (0.9), then 2 (0.7).
    boxes = [[0, 0, 1, 1], [0, 0.1, 1, 1], [0, 0.5, 1, 1.5]]
    got = nms(boxes, [0.9, 0.8, 0.7], 10)
    assert got.dtype == np.int32
    assert got.tolist() == [0, 2]


def test_three_clusters_as_documented_by_tf():
    assert nms(CLUSTERS, CLUSTER_SCORES, 3).tolist() == [3, 0, 5]
    # max_output_size bounds the result; a larger one returns every survivor.
    assert nms(CLUSTERS, CLUSTER_SCORES, 2).tolist() == [3, 0]
    assert nms(CLUSTERS, CLUSTER_SCORES, 100).tolist() == [3, 0, 5]
    assert nms(CLUSTERS, CLUSTER_SCORES, 0).tolist() == []


def test_score_threshold_filters_before_suppression():
    # Box 5 (0.3) is not above 0.4, so only one box per remaining cluster is left.
    assert nms(CLUSTERS, CLUSTER_SCORES, 6, 0.5, 0.4).tolist() == [3, 0]
    # The threshold is strict: a score equal to it is dropped.
    assert nms(CLUSTERS, CLUSTER_SCORES, 6, 0.5, 0.3).tolist() == [3, 0]


def test_corners_in_either_order():
    flipped = CLUSTERS[:, [2, 3, 0, 1]]  # [y2, x2, y1, x1]
    assert nms(flipped, CLUSTER_SCORES, 3).tolist() == [3, 0, 5]


def test_iou_equal_to_threshold_is_kept_and_zero_area_overlaps_nothing():
    # IoU of these two is 2 / 4 = 0.5 exactly: suppression needs IoU > threshold.
    assert nms([[0, 0, 1, 3], [0, 1, 1, 4]], [0.9, 0.8], 5, 0.5).tolist() == [0, 1]
    assert nms([[0, 0, 1, 3], [0, 1, 1, 4]], [0.9, 0.8], 5, 0.49).tolist() == [0]
    # A degenerate (zero-area) box has IoU 0 with everything, even a box that contains it.
    assert nms([[0, 0, 2, 2], [1, 1, 1, 1.5]], [0.9, 0.8], 5, 0.0).tolist() == [0, 1]


def test_iou_threshold_zero_keeps_only_disjoint_boxes():
    assert nms(CLUSTERS, CLUSTER_SCORES, 6, 0.0).tolist() == [3, 0, 5]


def test_placeholders_graph_names_and_static_shape():
    boxes = tf.placeholder(tf.float32, [None, 4])
    scores = tf.placeholder(tf.float32, [None])
    selected = tf.image.non_max_suppression(boxes, scores, 3)
    assert selected.dtype == tf.int32 and selected.shape.as_list() == [None]
    assert selected.op.type == "NonMaxSuppressionV3"
    assert selected.name == "non_max_suppression/NonMaxSuppressionV3:0"
    # A compiled op can consume the data-dependent result.
    kept = tf.gather(boxes, selected) * 2.0
    got = run(kept, {boxes: CLUSTERS, scores: CLUSTER_SCORES})
    np.testing.assert_allclose(got, 2 * CLUSTERS[[3, 0, 5]])


def test_static_shape_errors():
    with pytest.raises(ValueError):
        tf.image.non_max_suppression(tf.zeros([3, 5]), tf.zeros([3]), 2)
    with pytest.raises(ValueError):
        tf.image.non_max_suppression(tf.zeros([3, 4]), tf.zeros([2]), 2)
    with pytest.raises(ValueError):
        tf.image.non_max_suppression(tf.zeros([3, 4]), tf.zeros([3]), [2])


def test_run_time_errors():
    boxes = tf.placeholder(tf.float32, [None, 4])
    scores = tf.placeholder(tf.float32, [None])
    bad_iou = tf.image.non_max_suppression(boxes, scores, 2, iou_threshold=1.5)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"iou_threshold must be in \[0, 1\]"):
        run(bad_iou, {boxes: CLUSTERS, scores: CLUSTER_SCORES})
    selected = tf.image.non_max_suppression(boxes, scores, 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="scores has incompatible shape"):
        run(selected, {boxes: CLUSTERS, scores: CLUSTER_SCORES[:3]})
