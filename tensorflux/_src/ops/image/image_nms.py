"""Non-max suppression: TF1's NonMaxSuppressionV3 record and `tf.image.non_max_suppression`.

How many boxes survive depends on the data, so this is a `host` record with a NumPy
kernel (compiler/run_plan.py runs it between compiled clusters). The kernel follows TF's
CPU kernel (core/kernels/non_max_suppression_op.cc, TF 1.13-1.15):

- candidates are the boxes whose score is strictly greater than `score_threshold`;
- they are visited in decreasing score order (equal scores: lower index first; TF's
  priority queue leaves that order unspecified);
- a candidate is dropped when its IoU with an already selected box is *greater* than
  `iou_threshold` (equal IoU keeps it);
- a box is any two opposite corners: [y1, x1, y2, x2] in either order; a box with zero
  area overlaps nothing;
- at most `max_output_size` indices come back, int32, in selection order.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error, merge_shapes, with_rank
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["non_max_suppression"]


def _corners(boxes):
    """(ymin, xmin, ymax, xmax) columns of [n, 4] boxes given by either pair of corners."""
    y_lo, y_hi = np.minimum(boxes[:, 0], boxes[:, 2]), np.maximum(boxes[:, 0], boxes[:, 2])
    x_lo, x_hi = np.minimum(boxes[:, 1], boxes[:, 3]), np.maximum(boxes[:, 1], boxes[:, 3])
    return y_lo, x_lo, y_hi, x_hi


def _iou_with(i, others, corners, areas):
    """IoU of box i with each box in `others`; 0 where either box has no area, as in TF."""
    y_lo, x_lo, y_hi, x_hi = corners
    inter_h = np.maximum(np.minimum(y_hi[i], y_hi[others]) - np.maximum(y_lo[i], y_lo[others]), 0)
    inter_w = np.maximum(np.minimum(x_hi[i], x_hi[others]) - np.maximum(x_lo[i], x_lo[others]), 0)
    inter = inter_h * inter_w
    union = areas[i] + areas[others] - inter
    valid = (areas[i] > 0) & (areas[others] > 0)
    return np.where(valid, inter / np.where(valid, union, 1), 0)


def _check_scalar(value, name):
    if np.ndim(value) != 0:
        raise kernel_error(f"{name} must be 0-D, got shape {list(np.shape(value))}")


def _nms_kernel(boxes, scores, max_output_size, iou_threshold, score_threshold):
    for value, name in ((max_output_size, "max_output_size"), (iou_threshold, "iou_threshold"),
                        (score_threshold, "score_threshold")):
        _check_scalar(value, name)
    if not 0 <= float(iou_threshold) <= 1:
        raise kernel_error("iou_threshold must be in [0, 1]")
    if boxes.ndim != 2:
        raise kernel_error(f"boxes must be 2-D{list(boxes.shape)}")
    if boxes.shape[1] != 4:
        raise kernel_error("boxes must have 4 columns")
    if scores.ndim != 1:
        raise kernel_error(f"scores must be 1-D{list(scores.shape)}")
    if scores.shape[0] != boxes.shape[0]:
        raise kernel_error("scores has incompatible shape")
    limit = int(max_output_size)
    if limit < 0:
        raise kernel_error("output size must be non-negative")

    # The comparisons run in float32 as TF's do (thresholds are float32 scalars).
    boxes = boxes.astype(np.float32)
    scores = scores.astype(np.float32)
    corners = _corners(boxes)
    areas = (corners[2] - corners[0]) * (corners[3] - corners[1])
    candidates = np.flatnonzero(scores > np.float32(score_threshold))
    order = candidates[np.argsort(-scores[candidates], kind="stable")]

    selected = []
    for i in order:
        if len(selected) >= limit:
            break
        if not selected or not np.any(_iou_with(i, np.array(selected), corners, areas)
                                      > np.float32(iou_threshold)):
            selected.append(i)
    return np.array(selected, np.int32)


def _nms_shape(op):
    boxes = with_rank(op.inputs[0].shape, 2)
    merge_shapes(boxes[1:], TensorShape([4]))
    scores = with_rank(op.inputs[1].shape, 1)
    merge_shapes(boxes[:1], scores)
    for t in op.inputs[2:]:
        with_rank(t.shape, 0)
    return TensorShape([None])  # how many survive is known only when it runs


register(OpDef(
    "NonMaxSuppressionV3",
    inputs=("boxes: T", "scores: T", "max_output_size: int32", "iou_threshold: float",
            "score_threshold: float"),
    outputs=("selected_indices: int32",),
    attrs={"T": (_dtypes.float16, _dtypes.float32)}, type_defaults={"T": _dtypes.float32},
    shape=_nms_shape, host=_nms_kernel, not_differentiable=True,
))


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5,
                        score_threshold=float("-inf"), name=None):
    """Indices (int32, [M], M <= max_output_size) of boxes kept by greedy non-max
    suppression, highest score first.

    boxes: [num_boxes, 4] as [y1, x1, y2, x2] (either corner order); scores: [num_boxes].
    A box is dropped when its IoU with a kept, higher-scoring box is > iou_threshold;
    boxes scoring <= score_threshold are never kept. Gather the boxes with
    `tf.gather(boxes, selected_indices)`.
    """
    with _graph.name_scope(name, "non_max_suppression", [boxes, scores]):
        iou_threshold = convert_to_tensor(iou_threshold, dtype=_dtypes.float32,
                                          name="iou_threshold")
        score_threshold = convert_to_tensor(score_threshold, dtype=_dtypes.float32,
                                            name="score_threshold")
        return apply_op("NonMaxSuppressionV3", boxes=boxes, scores=scores,
                        max_output_size=max_output_size, iou_threshold=iou_threshold,
                        score_threshold=score_threshold)
