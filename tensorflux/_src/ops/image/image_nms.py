"""Non-max suppression: TF1's NonMaxSuppressionV3/V4/V5 and NonMaxSuppressionWithOverlaps
records and `tf.image.non_max_suppression` & co.

How many boxes survive depends on the data, so these are `host` records with NumPy
kernels (compiler/run_plan.py runs them between compiled clusters). They share one greedy
selection, TF's DoNonMaxSuppressionOp (core/kernels/non_max_suppression_op.cc):

- candidates are the boxes whose score is strictly greater than `score_threshold`;
- they are visited in decreasing score order, equal scores lower index first (TF's
  priority-queue order);
- a candidate is dropped when its similarity (IoU, or the given overlap) with an already
  selected box is *greater* than the threshold (equal keeps it);
- soft-NMS (V5, soft_nms_sigma > 0): each selected box multiplies a candidate's score by
  exp(-0.5 * iou^2 / sigma) instead of dropping it; a candidate whose score changed goes
  back into the queue with its new score (each selected box weighs it once) and is dropped
  once its score is <= score_threshold. As in TF's current kernel, iou_threshold does not
  drop boxes in that mode (TF1.15's first soft-NMS kernel still dropped those with
  IoU >= iou_threshold);
- a box is any two opposite corners: [y1, x1, y2, x2] in either order; a box with zero
  area overlaps nothing;
- at most `max_output_size` indices come back, int32, in selection order
  (`pad_to_max_output_size` pads them with zeros to exactly that many).
The arithmetic is float32, as TF's float kernels (half inputs are widened).
"""

from __future__ import annotations

import heapq

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import (kernel_error, merge_shapes, scalar_input_dim,
                                            with_rank)
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["non_max_suppression", "non_max_suppression_overlaps",
           "non_max_suppression_padded", "non_max_suppression_with_scores"]

_F32 = np.float32


def corners(boxes):
    """(ymin, xmin, ymax, xmax) columns of [n, 4] boxes given by either pair of corners."""
    y_lo, y_hi = np.minimum(boxes[:, 0], boxes[:, 2]), np.maximum(boxes[:, 0], boxes[:, 2])
    x_lo, x_hi = np.minimum(boxes[:, 1], boxes[:, 3]), np.maximum(boxes[:, 1], boxes[:, 3])
    return y_lo, x_lo, y_hi, x_hi


def box_similarity(boxes):
    """similarity(i, js): float32 IoU of box i with boxes js (0 where either has no area,
    as TF), computed when asked: NMS inputs may hold many thousands of boxes."""
    y_lo, x_lo, y_hi, x_hi = corners(boxes.astype(_F32))
    areas = (y_hi - y_lo) * (x_hi - x_lo)

    def similarity(i, js):
        inter_h = np.maximum(np.minimum(y_hi[i], y_hi[js]) - np.maximum(y_lo[i], y_lo[js]),
                             _F32(0))
        inter_w = np.maximum(np.minimum(x_hi[i], x_hi[js]) - np.maximum(x_lo[i], x_lo[js]),
                             _F32(0))
        inter = inter_h * inter_w
        valid = (areas[i] > 0) & (areas[js] > 0)
        union = np.where(valid, areas[i] + areas[js] - inter, _F32(1))
        return np.where(valid, inter / union, _F32(0)).astype(_F32)

    return similarity


def greedy_select(scores, similarity, limit, threshold, score_threshold, soft_sigma=0.0):
    """(selected indices, their scores) by TF's greedy (soft-)NMS; `similarity(i, js)` gives
    box i's IoU (or the user's overlap) with boxes js."""
    scores = np.asarray(scores, _F32)
    threshold, score_threshold = _F32(threshold), _F32(score_threshold)
    soft = soft_sigma > 0
    scale = _F32(-0.5) / _F32(soft_sigma) if soft else _F32(0)
    # Python's heap pops the smallest: (-score, index) is TF's order.
    queue = [(-s, i, 0) for i, s in enumerate(scores.tolist()) if _F32(s) > score_threshold]
    heapq.heapify(queue)
    selected, selected_scores = [], []
    while len(selected) < limit and queue:
        neg, index, begin = heapq.heappop(queue)
        score = original = _F32(-neg)
        # The boxes selected since this candidate was last weighed, newest first.
        newer = np.array(selected[begin:][::-1], np.int64)
        sims = similarity(index, newer) if len(newer) else np.zeros([0], _F32)
        if not soft:
            if np.any(sims > threshold):
                continue  # suppressed
        else:
            for weight in np.exp(scale * sims * sims).astype(_F32):
                score = _F32(score * weight)
                if score <= score_threshold:
                    break
        if score == original:
            selected.append(index)
            selected_scores.append(score)
        elif score > score_threshold:
            heapq.heappush(queue, (-float(score), index, len(selected)))
    return np.array(selected, np.int32), np.array(selected_scores, _F32)


def _check_scalar(value, name):
    if np.ndim(value) != 0:
        raise kernel_error(f"{name} must be 0-D, got shape {list(np.shape(value))}")


def _check_scalars(**values):
    for name, value in values.items():
        _check_scalar(value, name)


def _check_iou(iou_threshold):
    if not 0 <= float(iou_threshold) <= 1:
        raise kernel_error("iou_threshold must be in [0, 1]")


def _check_boxes_scores(boxes, scores):
    if boxes.ndim != 2:
        raise kernel_error(f"boxes must be 2-D{list(boxes.shape)}")
    if boxes.shape[1] != 4:
        raise kernel_error("boxes must have 4 columns")
    _check_scores(scores, boxes.shape[0])


def _check_scores(scores, num_boxes):
    if scores.ndim != 1:
        raise kernel_error(f"scores must be 1-D{list(scores.shape)}")
    if scores.shape[0] != num_boxes:
        raise kernel_error("scores has incompatible shape")


def _limit(max_output_size):
    limit = int(max_output_size)
    if limit < 0:
        raise kernel_error("output size must be non-negative")
    return limit


def _padded(values, limit, pad):
    if not pad:
        return values
    out = np.zeros([limit], values.dtype)
    out[:len(values)] = values
    return out


def _nms_kernel(boxes, scores, max_output_size, iou_threshold, score_threshold):
    _check_scalars(max_output_size=max_output_size, iou_threshold=iou_threshold,
                   score_threshold=score_threshold)
    _check_iou(iou_threshold)
    _check_boxes_scores(boxes, scores)
    limit = _limit(max_output_size)
    return greedy_select(scores, box_similarity(boxes), limit, iou_threshold,
                         score_threshold)[0]


def _nms_v4_kernel(boxes, scores, max_output_size, iou_threshold, score_threshold,
                   pad_to_max_output_size):
    selected = _nms_kernel(boxes, scores, max_output_size, iou_threshold, score_threshold)
    return (_padded(selected, int(max_output_size), pad_to_max_output_size),
            np.int32(len(selected)))


def _nms_v5_kernel(boxes, scores, max_output_size, iou_threshold, score_threshold,
                   soft_nms_sigma, pad_to_max_output_size):
    _check_scalars(max_output_size=max_output_size, iou_threshold=iou_threshold,
                   score_threshold=score_threshold, soft_nms_sigma=soft_nms_sigma)
    _check_iou(iou_threshold)
    if float(soft_nms_sigma) < 0:
        raise kernel_error("soft_nms_sigma must be non-negative")
    _check_boxes_scores(boxes, scores)
    limit = _limit(max_output_size)
    selected, kept = greedy_select(scores, box_similarity(boxes), limit, iou_threshold,
                                   score_threshold, float(soft_nms_sigma))
    return (_padded(selected, limit, pad_to_max_output_size),
            _padded(kept, limit, pad_to_max_output_size).astype(scores.dtype),
            np.int32(len(selected)))


def _nms_overlaps_kernel(overlaps, scores, max_output_size, overlap_threshold,
                         score_threshold):
    _check_scalars(max_output_size=max_output_size, overlap_threshold=overlap_threshold,
                   score_threshold=score_threshold)
    if overlaps.ndim != 2:
        raise kernel_error(f"overlaps must be 2-D{list(overlaps.shape)}")
    if overlaps.shape[1] != overlaps.shape[0]:
        raise kernel_error(f"overlaps must be square{list(overlaps.shape)}")
    _check_scores(scores, overlaps.shape[0])
    limit = _limit(max_output_size)
    overlaps = overlaps.astype(_F32)
    return greedy_select(scores, lambda i, js: overlaps[i, js], limit, overlap_threshold,
                         score_threshold)[0]


def _nms_shape(op, num_scalars=3):
    boxes = with_rank(op.inputs[0].shape, 2)
    merge_shapes(boxes[1:], TensorShape([4]))
    scores = with_rank(op.inputs[1].shape, 1)
    merge_shapes(boxes[:1], scores)
    for t in op.inputs[2:2 + num_scalars]:
        with_rank(t.shape, 0)
    return TensorShape([None])  # how many survive is known only when it runs


def _padded_shape(op):
    """V4/V5: [max_output_size] when padding to it (TF's MakeDimForScalarInput)."""
    if op.attrs.get("pad_to_max_output_size", False):
        return TensorShape([scalar_input_dim(op, 2)])
    return TensorShape([None])


def _nms_v4_shape(op):
    _nms_shape(op)
    return [_padded_shape(op), TensorShape([])]


def _nms_v5_shape(op):
    _nms_shape(op, num_scalars=4)
    selected = _padded_shape(op)
    return [selected, selected, TensorShape([])]


def _nms_overlaps_shape(op):
    overlaps = with_rank(op.inputs[0].shape, 2)
    scores = with_rank(op.inputs[1].shape, 1)
    for t in op.inputs[2:]:
        with_rank(t.shape, 0)
    merge_shapes(overlaps[:1], scores)
    merge_shapes(overlaps[:1], overlaps[1:])
    return TensorShape([None])


_NMS_TYPES = {"T": (_dtypes.float16, _dtypes.float32)}
_NMS_INPUTS = ("boxes: T", "scores: T", "max_output_size: int32")
register(OpDef(
    "NonMaxSuppressionV3",
    inputs=_NMS_INPUTS + ("iou_threshold: float", "score_threshold: float"),
    outputs=("selected_indices: int32",), attrs=_NMS_TYPES,
    type_defaults={"T": _dtypes.float32}, shape=_nms_shape, host=_nms_kernel,
    not_differentiable=True,
))
register(OpDef(
    "NonMaxSuppressionV4",
    inputs=_NMS_INPUTS + ("iou_threshold: float", "score_threshold: float"),
    outputs=("selected_indices: int32", "valid_outputs: int32"),
    attrs={**_NMS_TYPES, "pad_to_max_output_size": False},
    type_defaults={"T": _dtypes.float32}, shape=_nms_v4_shape, host=_nms_v4_kernel,
    not_differentiable=True,
))
register(OpDef(
    "NonMaxSuppressionV5",
    inputs=_NMS_INPUTS + ("iou_threshold: T", "score_threshold: T", "soft_nms_sigma: T"),
    outputs=("selected_indices: int32", "selected_scores: T", "valid_outputs: int32"),
    attrs={**_NMS_TYPES, "pad_to_max_output_size": False},
    type_defaults={"T": _dtypes.float32}, shape=_nms_v5_shape, host=_nms_v5_kernel,
    not_differentiable=True,
))
register(OpDef(
    "NonMaxSuppressionWithOverlaps",
    inputs=("overlaps: float", "scores: float", "max_output_size: int32",
            "overlap_threshold: float", "score_threshold: float"),
    outputs=("selected_indices: int32",), shape=_nms_overlaps_shape,
    host=_nms_overlaps_kernel, not_differentiable=True,
))


def _thresholds(dtype=_dtypes.float32, **values):
    return [convert_to_tensor(v, dtype=dtype, name=k) for k, v in values.items()]


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
        iou_threshold, score_threshold = _thresholds(iou_threshold=iou_threshold,
                                                     score_threshold=score_threshold)
        return apply_op("NonMaxSuppressionV3", boxes=boxes, scores=scores,
                        max_output_size=max_output_size, iou_threshold=iou_threshold,
                        score_threshold=score_threshold)


def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5,
                               score_threshold=float("-inf"), pad_to_max_output_size=False,
                               name=None):
    """(selected_indices, valid_outputs): non_max_suppression's indices, zero-padded to
    `max_output_size` entries when `pad_to_max_output_size`, and how many are real."""
    with _graph.name_scope(name, "non_max_suppression_padded"):
        iou_threshold, score_threshold = _thresholds(iou_threshold=iou_threshold,
                                                     score_threshold=score_threshold)
        return tuple(apply_op("NonMaxSuppressionV4", boxes=boxes, scores=scores,
                              max_output_size=max_output_size, iou_threshold=iou_threshold,
                              score_threshold=score_threshold,
                              pad_to_max_output_size=pad_to_max_output_size))


def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0,
                                    name=None):
    """(selected_indices, selected_scores) of greedy NMS; with soft_nms_sigma > 0, Soft-NMS
    (Bodla et al.): overlapping boxes lower each other's scores by a Gaussian of their IoU
    instead of being dropped, and selected_scores are the lowered scores."""
    with _graph.name_scope(name, "non_max_suppression_with_scores"):
        iou_threshold, score_threshold, soft_nms_sigma = _thresholds(
            dtype=None, iou_threshold=iou_threshold, score_threshold=score_threshold,
            soft_nms_sigma=soft_nms_sigma)
        selected, kept, _ = apply_op("NonMaxSuppressionV5", boxes=boxes, scores=scores,
                                     max_output_size=max_output_size,
                                     iou_threshold=iou_threshold,
                                     score_threshold=score_threshold,
                                     soft_nms_sigma=soft_nms_sigma,
                                     pad_to_max_output_size=False)
        return selected, kept


def non_max_suppression_overlaps(overlaps, scores, max_output_size, overlap_threshold=0.5,
                                 score_threshold=float("-inf"), name=None):
    """Greedy NMS on a given [num_boxes, num_boxes] `overlaps` matrix: a box is dropped when
    its overlap with a kept, higher-scoring box is > overlap_threshold."""
    with _graph.name_scope(name, "non_max_suppression_overlaps"):
        overlap_threshold = convert_to_tensor(overlap_threshold, name="overlap_threshold")
        return apply_op("NonMaxSuppressionWithOverlaps", overlaps=overlaps, scores=scores,
                        max_output_size=max_output_size, overlap_threshold=overlap_threshold,
                        score_threshold=score_threshold)
