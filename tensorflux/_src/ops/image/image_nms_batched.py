"""Batched box selection: TF's CombinedNonMaxSuppression and GenerateBoundingBoxProposals
records, `tf.image.combined_non_max_suppression` and
`tf.image.generate_bounding_box_proposals`.

Both are `host` records with NumPy kernels (the selection is a data-dependent greedy loop),
but their outputs are padded to sizes fixed by the arguments, so the static shapes are
known when those arguments are constants.

CombinedNonMaxSuppression follows TF's CPU kernel (BatchedNonMaxSuppressionOp): per image
and per class, the boxes scoring > score_threshold are visited by decreasing score and
kept unless their IoU with a kept box of that class is > iou_threshold, at most
max_output_size_per_class of them; every class's picks are merged by decreasing score
(ties: class order, then pick order; TF's sort leaves them unspecified) and the first
max_total_size are returned, their boxes clipped to [0, 1] when clip_boxes, then padded
with zeros. The output size is max_total_size, or with pad_per_class
min(max_total_size, max_output_size_per_class * num_classes).

GenerateBoundingBoxProposals follows TF's (GPU-only) kernel, here on the host: each
anchor [y1, x1, y2, x2] at (h, w, a) is moved by its deltas [dy, dx, dh, dw] (centre
shifted by d * size, size scaled by exp(min(d, log(1000 / 16)))), the boxes with the
pre_nms_topn best scores are clipped to the image (image_info = [height, width, scale,
...]), those narrower than min_size * scale are dropped, greedy NMS (IoU > nms_threshold
suppresses; boxes with no area suppress nothing) keeps at most post_nms_topn, and rois /
roi_probabilities are zero-padded to post_nms_topn.
"""

from __future__ import annotations

import math

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.image.image_crop import merge_dim, with_value
from tensorflux._src.ops.image.image_nms import box_similarity, greedy_select
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import dims_str, kernel_error, scalar_input_dim, with_rank
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["combined_non_max_suppression", "generate_bounding_box_proposals"]

_F32 = np.float32


# -- CombinedNonMaxSuppression ---------------------------------------------------------------
def _scalar(value, name):
    if np.ndim(value) != 0:
        raise kernel_error(f"{name} must be 0-D, got shape {dims_str(np.shape(value))}")
    return value[()]


def _combined_nms_kernel(boxes, scores, max_output_size_per_class, max_total_size,
                         iou_threshold, score_threshold, pad_per_class, clip_boxes):
    if boxes.shape[0] != scores.shape[0]:
        raise kernel_error("boxes and scores must have same batch size")
    per_class = int(_scalar(max_output_size_per_class, "max_size_per_class"))
    total = int(_scalar(max_total_size, "max_total_size"))
    if total <= 0:
        raise kernel_error("max_total_size must be > 0")
    iou_threshold = _F32(_scalar(iou_threshold, "iou_threshold"))
    score_threshold = _F32(_scalar(score_threshold, "score_threshold"))
    if not 0 <= iou_threshold <= 1:
        raise kernel_error("iou_threshold must be in [0, 1]")
    if boxes.ndim != 4:
        raise kernel_error(f"boxes must be 4-D{dims_str(boxes.shape)}")
    num_classes = scores.shape[2] if scores.ndim == 3 else 0
    if boxes.shape[2] not in (1, num_classes):
        raise kernel_error("third dimension of boxes must be either 1 or num classes")
    if boxes.shape[3] != 4:
        raise kernel_error("boxes must have 4 columns")
    if scores.ndim != 3:
        raise kernel_error(f"scores must be 3-D{dims_str(scores.shape)}")
    if scores.shape[1] != boxes.shape[1]:
        raise kernel_error("scores has incompatible shape")

    batch, num_boxes = boxes.shape[:2]
    size = min(total, per_class * num_classes) if pad_per_class else total
    out_boxes = np.zeros([batch, size, 4], _F32)
    out_scores = np.zeros([batch, size], _F32)
    out_classes = np.zeros([batch, size], _F32)
    valid = np.zeros([batch], np.int32)
    limit = min(per_class, num_boxes)
    for b in range(batch):
        picks = []  # (score, class, box)
        for c in range(num_classes):
            class_boxes = boxes[b, :, c if boxes.shape[2] > 1 else 0].astype(_F32)
            chosen, kept = greedy_select(scores[b, :, c], box_similarity(class_boxes), limit,
                                         iou_threshold, score_threshold)
            picks.extend((s, c, class_boxes[i]) for i, s in zip(chosen, kept))
        picks.sort(key=lambda p: -p[0])  # stable: equal scores keep class order
        picks = picks[:size]
        valid[b] = len(picks)
        for k, (score, c, box) in enumerate(picks):
            out_boxes[b, k] = np.clip(box, 0, 1) if clip_boxes else box
            out_scores[b, k] = score
            out_classes[b, k] = c
    return out_boxes, out_scores, out_classes, valid


def _combined_nms_shape(op):
    boxes = with_rank(op.inputs[0].shape, 4)
    scores = with_rank(op.inputs[1].shape, 3)
    for t in op.inputs[2:]:
        with_rank(t.shape, 0)
    batch = merge_dim(boxes[0].value, scores[0].value)
    merge_dim(boxes[1].value, scores[1].value)
    with_value(boxes[3].value, 4)
    q, num_classes = boxes[2].value, scores[2].value
    if q is not None and num_classes is not None and q not in (1, num_classes):
        raise ValueError("third dimension of boxes must be either 1 or equal to the third "
                         "dimension of scores")
    total = scalar_input_dim(op, 3)
    if total is not None and total <= 0:
        raise ValueError("max_total_size should be > 0 ")
    per_class = scalar_input_dim(op, 2)
    size = total
    if op.attrs.get("pad_per_class", False):
        if per_class is not None and per_class <= 0:
            raise ValueError("max_output_size_per_class must be > 0 if pad_per_class is set "
                             "to true ")
        size = (None if None in (total, per_class, num_classes)
                else min(total, per_class * num_classes))
    return [TensorShape([batch, size, 4]), TensorShape([batch, size]),
            TensorShape([batch, size]), TensorShape([batch])]


register(OpDef(
    "CombinedNonMaxSuppression",
    inputs=("boxes: float", "scores: float", "max_output_size_per_class: int32",
            "max_total_size: int32", "iou_threshold: float", "score_threshold: float"),
    outputs=("nmsed_boxes: float", "nmsed_scores: float", "nmsed_classes: float",
             "valid_detections: int32"),
    attrs={"pad_per_class": False, "clip_boxes": True}, shape=_combined_nms_shape,
    host=_combined_nms_kernel, not_differentiable=True))


def combined_non_max_suppression(boxes, scores, max_output_size_per_class, max_total_size,
                                 iou_threshold=0.5, score_threshold=float("-inf"),
                                 pad_per_class=False, clip_boxes=True, name=None):
    """Per-class greedy NMS over a batch: boxes [batch, num_boxes, q, 4] (q is 1 or
    num_classes), scores [batch, num_boxes, num_classes]. Returns (nmsed_boxes,
    nmsed_scores, nmsed_classes, valid_detections), padded with zeros."""
    with _graph.name_scope(name, "combined_non_max_suppression"):
        iou_threshold = convert_to_tensor(iou_threshold, dtype=_dtypes.float32,
                                          name="iou_threshold")
        score_threshold = convert_to_tensor(score_threshold, dtype=_dtypes.float32,
                                            name="score_threshold")
        return tuple(apply_op(
            "CombinedNonMaxSuppression", boxes=boxes, scores=scores,
            max_output_size_per_class=max_output_size_per_class,
            max_total_size=max_total_size, iou_threshold=iou_threshold,
            score_threshold=score_threshold, pad_per_class=pad_per_class,
            clip_boxes=clip_boxes))


# -- GenerateBoundingBoxProposals ------------------------------------------------------------
_BBOX_XFORM_CLIP = _F32(math.log(1000.0 / 16.0))


def _scalar_input(value, index):
    if np.ndim(value) != 0:
        raise kernel_error(f"Expected a scalar in input {index}but got shape "
                           f"{dims_str(np.shape(value))}")
    return value[()]


def _decode(anchors, deltas):
    """Anchors [n, 4] moved by deltas [n, 4] ([dy, dx, dh, dw]), as (x1, y1, x2, y2)."""
    y1, x1, y2, x2 = (anchors[:, i] for i in range(4))
    dy, dx, dh, dw = (deltas[:, i] for i in range(4))
    dw, dh = np.minimum(dw, _BBOX_XFORM_CLIP), np.minimum(dh, _BBOX_XFORM_CLIP)
    width, height = x2 - x1, y2 - y1
    ctr_x = x1 + _F32(0.5) * width + width * dx
    ctr_y = y1 + _F32(0.5) * height + height * dy
    pred_w, pred_h = width * np.exp(dw), height * np.exp(dh)
    return (ctr_x - _F32(0.5) * pred_w, ctr_y - _F32(0.5) * pred_h,
            ctr_x + _F32(0.5) * pred_w, ctr_y + _F32(0.5) * pred_h)


def _greedy_upright(x1, y1, x2, y2, threshold, limit):
    """Greedy NMS of boxes already in score order: IoU > threshold, written as TF's GPU
    kernel tests it (intersection > union * threshold); a box with no area suppresses
    nothing."""
    areas = (x2 - x1) * (y2 - y1)
    keep = []
    for i in range(len(x1)):
        if len(keep) >= limit:
            break
        k = np.array(keep, np.int64)
        inter = (np.maximum(_F32(0), np.minimum(x2[i], x2[k]) - np.maximum(x1[i], x1[k]))
                 * np.maximum(_F32(0), np.minimum(y2[i], y2[k]) - np.maximum(y1[i], y1[k])))
        over = inter > (areas[i] + areas[k] - inter) * threshold
        over &= (areas[i] != 0) & (areas[k] != 0)
        if not over.any():
            keep.append(i)
    return np.array(keep, np.int64)


def _proposals_kernel(scores, bbox_deltas, image_info, anchors, nms_threshold,
                      pre_nms_topn, min_size, post_nms_topn):
    if post_nms_topn <= 0:
        raise kernel_error("post_nms_topn can't be 0 or less")
    num_images, height, width, num_anchors = scores.shape
    if anchors.shape[-1] != 4 * num_anchors:
        raise errors.OutOfRangeError(None, None, "Box dimensions need to be 4")
    nms_threshold = _F32(_scalar_input(nms_threshold, 4))
    if nms_threshold < 0 or nms_threshold > 1.0:
        raise kernel_error(f"nms_threshold should be between 0 and 1. Got {nms_threshold}")
    pre_nms_topn = int(_scalar_input(pre_nms_topn, 5))
    if pre_nms_topn <= 0:
        raise kernel_error(f"pre_nms_topn should be greater than 0{pre_nms_topn}")
    min_size = _F32(_scalar_input(min_size, 6))
    count = height * width * num_anchors
    anchors = anchors.reshape(count, 4).astype(_F32)
    deltas = bbox_deltas.reshape(num_images, count, 4).astype(_F32)
    rois = np.zeros([num_images, post_nms_topn, 4], _F32)
    probs = np.zeros([num_images, post_nms_topn], _F32)
    for n in range(num_images):
        flat = scores[n].reshape(count).astype(_F32)
        order = np.argsort(-flat, kind="stable")[:min(count, pre_nms_topn)]
        x1, y1, x2, y2 = _decode(anchors[order], deltas[n, order])
        img_h, img_w, scale = (_F32(v) for v in image_info[n, :3])
        x1, x2 = (np.clip(v, _F32(0), img_w) for v in (x1, x2))
        y1, y2 = (np.clip(v, _F32(0), img_h) for v in (y1, y2))
        big = np.minimum(x2 - x1, y2 - y1) >= min_size * scale
        x1, y1, x2, y2, kept_scores = (v[big] for v in (x1, y1, x2, y2, flat[order]))
        keep = _greedy_upright(x1, y1, x2, y2, nms_threshold, post_nms_topn)
        rois[n, :len(keep)] = np.stack([y1[keep], x1[keep], y2[keep], x2[keep]], axis=-1)
        probs[n, :len(keep)] = kept_scores[keep]
    return rois, probs


def _proposals_shape(op):
    scores = with_rank(op.inputs[0].shape, 4)
    with_rank(op.inputs[1].shape, 4)
    image_info = with_rank(op.inputs[2].shape, 2)
    with_value(image_info[1].value, 5)
    with_rank(op.inputs[3].shape, 3)
    for t in op.inputs[4:]:
        with_rank(t.shape, 0)
    topn = op.attrs.get("post_nms_topn", 300)
    return [TensorShape([scores[0].value, topn, 4]), TensorShape([scores[0].value, topn])]


register(OpDef(
    "GenerateBoundingBoxProposals",
    inputs=("scores: float", "bbox_deltas: float", "image_info: float", "anchors: float",
            "nms_threshold: float", "pre_nms_topn: int32", "min_size: float"),
    outputs=("rois: float", "roi_probabilities: float"), attrs={"post_nms_topn": 300},
    shape=_proposals_shape, host=_proposals_kernel, not_differentiable=True))


def generate_bounding_box_proposals(scores, bbox_deltas, image_info, anchors,
                                    nms_threshold=0.7, pre_nms_topn=6000, min_size=16,
                                    post_nms_topn=300, name=None):
    """Region proposals from anchors: scores [N, H, W, A], bbox_deltas [N, H, W, 4A]
    ([dy, dx, dh, dw] per anchor), image_info [N, 5] ([height, width, scale, ...]),
    anchors [H, W, 4A] ([y1, x1, y2, x2]). Returns (rois [N, post_nms_topn, 4],
    roi_probabilities [N, post_nms_topn]), zero-padded."""
    return apply_op("GenerateBoundingBoxProposals", name=name, scores=scores,
                    bbox_deltas=bbox_deltas, image_info=image_info, anchors=anchors,
                    nms_threshold=nms_threshold, pre_nms_topn=pre_nms_topn,
                    min_size=float(min_size), post_nms_topn=post_nms_topn)
