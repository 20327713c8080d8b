"""NonMaxSuppressionV4/V5/WithOverlaps, CombinedNonMaxSuppression and
GenerateBoundingBoxProposals (host kernels) against plain Python loops written here:
greedy NMS, eager Soft-NMS (Bodla et al.), per-class batched NMS and anchor decoding."""

import math

import numpy as np
import pytest

import tensorflux as tf
from tests.helpers import run

RNG = np.random.default_rng(11)


def random_boxes(n, scale=10.0, smallest=0.5):
    corner = RNG.uniform(0, scale, (n, 2))
    size = RNG.uniform(smallest, scale / 2, (n, 2))
    return np.concatenate([corner, corner + size], axis=1).astype(np.float32)


def iou(a, b):
    ya0, xa0, ya1, xa1 = min(a[0], a[2]), min(a[1], a[3]), max(a[0], a[2]), max(a[1], a[3])
    yb0, xb0, yb1, xb1 = min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])
    area_a, area_b = (ya1 - ya0) * (xa1 - xa0), (yb1 - yb0) * (xb1 - xb0)
    if area_a <= 0 or area_b <= 0:
        return 0.0
    inter = max(min(ya1, yb1) - max(ya0, yb0), 0) * max(min(xa1, xb1) - max(xa0, xb0), 0)
    return inter / (area_a + area_b - inter)


def greedy(scores, overlap, limit, threshold, score_threshold=-np.inf):
    order = sorted((i for i in range(len(scores)) if scores[i] > score_threshold),
                   key=lambda i: (-scores[i], i))
    kept = []
    for i in order:
        if len(kept) == limit:
            break
        if all(overlap(i, j) <= threshold for j in kept):
            kept.append(i)
    return kept


def soft_nms(boxes, scores, limit, score_threshold, sigma):
    """Eager Soft-NMS: every selection lowers all remaining scores at once."""
    current = {i: float(s) for i, s in enumerate(scores) if s > score_threshold}
    picked, picked_scores = [], []
    while current and len(picked) < limit:
        best = min(current, key=lambda i: (-current[i], i))
        picked.append(best)
        picked_scores.append(current.pop(best))
        for i in list(current):
            current[i] *= math.exp(-0.5 * iou(boxes[i], boxes[best]) ** 2 / sigma)
            if current[i] <= score_threshold:
                del current[i]
    return picked, picked_scores


def test_padded_and_with_scores():
    boxes = random_boxes(30, 6.0, 2.0)  # crowded: many overlaps
    scores = RNG.permutation(30).astype(np.float32) / 30 + 0.01
    b = tf.placeholder(tf.float32, [None, 4])
    s = tf.placeholder(tf.float32, [None])
    padded, valid = tf.image.non_max_suppression_padded(b, s, 28, 0.3, 0.2,
                                                        pad_to_max_output_size=True)
    unpadded, valid2 = tf.image.non_max_suppression_padded(b, s, 28, 0.3, 0.2)
    hard, hard_scores = tf.image.non_max_suppression_with_scores(b, s, 28, 0.3, 0.2)
    soft, soft_scores = tf.image.non_max_suppression_with_scores(b, s, 28, 1.0, 0.15,
                                                                 soft_nms_sigma=0.5)
    assert padded.op.type == "NonMaxSuppressionV4" and soft.op.type == "NonMaxSuppressionV5"
    assert padded.shape.as_list() == [28] and valid.shape.as_list() == []
    assert unpadded.shape.as_list() == [None] and soft_scores.shape.as_list() == [None]
    got = run([padded, valid, unpadded, valid2, hard, hard_scores, soft, soft_scores],
              {b: boxes, s: scores})
    want = greedy(scores, lambda i, j: iou(boxes[i], boxes[j]), 28, 0.3, 0.2)
    assert 0 < len(want) < 20
    np.testing.assert_array_equal(got[0], want + [0] * (28 - len(want)))
    assert got[1] == len(want) and got[1].dtype == np.int32 and got[3] == len(want)
    np.testing.assert_array_equal(got[2], want)
    np.testing.assert_array_equal(got[4], want)
    np.testing.assert_array_equal(got[5], scores[want])
    want_soft, want_scores = soft_nms(boxes, scores, 28, 0.15, 0.5)
    assert len(want_soft) > len(want)  # soft suppression keeps more, with lower scores
    np.testing.assert_array_equal(got[6], want_soft)
    np.testing.assert_allclose(got[7], want_scores, rtol=1e-5)
    assert np.any(got[7] < scores[got[6]])


def test_overlaps_and_errors():
    overlaps = RNG.uniform(0, 1, (12, 12)).astype(np.float32)
    overlaps = (overlaps + overlaps.T) / 2
    scores = RNG.uniform(0, 1, 12).astype(np.float32)
    selected = tf.image.non_max_suppression_overlaps(overlaps, scores, 6, 0.4, 0.1)
    assert selected.op.type == "NonMaxSuppressionWithOverlaps"
    want = greedy(scores, lambda i, j: overlaps[i, j], 6, 0.4, 0.1)
    np.testing.assert_array_equal(run(selected), want)

    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
        tf.image.non_max_suppression_overlaps(tf.zeros([3, 4]), tf.zeros([3]), 2)
    with pytest.raises(ValueError):
        tf.image.non_max_suppression_with_scores(tf.zeros([3, 4]), tf.zeros([3]), 2,
                                                 soft_nms_sigma=[0.5])
    b = tf.placeholder(tf.float32, [None, 4])
    s = tf.placeholder(tf.float32, [None])
    sigma = tf.placeholder(tf.float32, [])
    soft = tf.image.non_max_suppression_with_scores(b, s, 3, soft_nms_sigma=sigma)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="soft_nms_sigma must be non-negative"):
        run(soft, {b: random_boxes(3), s: [0.1, 0.2, 0.3], sigma: -1.0})
    padded = tf.image.non_max_suppression_padded(b, s, 3, iou_threshold=1.5)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"iou_threshold must be in \[0, 1\]"):
        run(padded, {b: random_boxes(3), s: [0.1, 0.2, 0.3]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="overlaps must be square"):
        o = tf.placeholder(tf.float32, [None, None])
        run(tf.image.non_max_suppression_overlaps(o, s, 2), {o: np.zeros([3, 2]),
                                                             s: [0.1, 0.2, 0.3]})


# -- combined_non_max_suppression --------------------------------------------------------------
def combined_reference(boxes, scores, per_class, total, iou_threshold, score_threshold,
                       pad_per_class, clip):
    batch, num_boxes, q, _ = boxes.shape
    num_classes = scores.shape[2]
    size = min(total, per_class * num_classes) if pad_per_class else total
    out = (np.zeros([batch, size, 4]), np.zeros([batch, size]), np.zeros([batch, size]),
           np.zeros([batch], np.int32))
    for b in range(batch):
        picks = []
        for c in range(num_classes):
            cb = boxes[b, :, c if q > 1 else 0]
            kept = greedy(scores[b, :, c], lambda i, j: iou(cb[i], cb[j]),
                          min(per_class, num_boxes), iou_threshold, score_threshold)
            picks += [(scores[b, i, c], c, cb[i]) for i in kept]
        picks = sorted(picks, key=lambda p: -p[0])[:size]
        out[3][b] = len(picks)
        for k, (score, c, box) in enumerate(picks):
            out[0][b, k] = np.clip(box, 0, 1) if clip else box
            out[1][b, k], out[2][b, k] = score, c
    return out


def test_combined_non_max_suppression():
    boxes_q1 = np.stack([random_boxes(20, 1.2) - 0.1 for _ in range(2)])[:, :, None]
    boxes_q3 = np.stack([np.stack([random_boxes(20, 1.0) for _ in range(3)], 1)
                         for _ in range(2)])
    scores = RNG.permutation(2 * 20 * 3).reshape(2, 20, 3).astype(np.float32) / 120
    ph_boxes = tf.placeholder(tf.float32, [None, None, None, 4])
    cases = [(boxes_q1, 4, 10, 0.5, 0.1, False, True), (boxes_q3, 3, 20, 0.3, 0.0, False, False),
             (boxes_q1, 2, 50, 0.6, 0.3, True, True), (boxes_q3, 5, 4, 0.4, -1.0, True, True)]
    built = [tf.image.combined_non_max_suppression(
        tf.constant(bx), scores, per_class, total, iou_thr, score_thr,
        pad_per_class=pad, clip_boxes=clip)
        for bx, per_class, total, iou_thr, score_thr, pad, clip in cases]
    assert built[0][0].op.type == "CombinedNonMaxSuppression"
    assert built[0][0].shape.as_list() == [2, 10, 4]
    assert built[2][1].shape.as_list() == [2, 6]  # pad_per_class: min(50, 2 * 3)
    assert built[3][3].shape.as_list() == [2]
    unknown = tf.image.combined_non_max_suppression(ph_boxes, scores, 2,
                                                    tf.placeholder_with_default(5, []))
    assert unknown[0].shape.as_list() == [2, None, 4]
    got = run(built)
    for g, (bx, per_class, total, iou_thr, score_thr, pad, clip) in zip(got, cases):
        want = combined_reference(bx.astype(np.float64), scores.astype(np.float64), per_class,
                                  total, iou_thr, score_thr, pad, clip)
        for gg, ww in zip(g, want):
            np.testing.assert_allclose(gg, ww, rtol=1e-6, atol=1e-7)
        assert g[3].dtype == np.int32 and g[2].dtype == np.float32

    with pytest.raises(ValueError, match="max_total_size should be > 0"):
        tf.image.combined_non_max_suppression(boxes_q1, scores, 2, 0)
    with pytest.raises(ValueError, match="third dimension of boxes must be either 1 or equal"):
        tf.image.combined_non_max_suppression(np.zeros([2, 20, 2, 4], np.float32), scores, 2, 3)
    with pytest.raises(ValueError, match="Dimension must be 4 but is 3"):
        tf.image.combined_non_max_suppression(np.zeros([2, 20, 1, 3], np.float32), scores, 2, 3)


# -- generate_bounding_box_proposals -----------------------------------------------------------
def proposals_reference(scores, deltas, image_info, anchors, nms_threshold, pre_nms_topn,
                        min_size, post_nms_topn):
    n, h, w, a = scores.shape
    clip_d = math.log(1000.0 / 16.0)
    rois = np.zeros([n, post_nms_topn, 4])
    probs = np.zeros([n, post_nms_topn])
    for img in range(n):
        cands = []
        for y in range(h):
            for x in range(w):
                for k in range(a):
                    ay1, ax1, ay2, ax2 = anchors[y, x, 4 * k:4 * k + 4]
                    dy, dx, dh, dw = deltas[img, y, x, 4 * k:4 * k + 4]
                    cands.append((scores[img, y, x, k], ay1, ax1, ay2, ax2, dy, dx,
                                  min(dh, clip_d), min(dw, clip_d)))
        cands = sorted(cands, key=lambda c: -c[0])[:pre_nms_topn]  # stable
        img_h, img_w, scale = image_info[img, :3]
        boxes = []
        for s, ay1, ax1, ay2, ax2, dy, dx, dh, dw in cands:
            bw, bh = ax2 - ax1, ay2 - ay1
            cx, cy = ax1 + 0.5 * bw + bw * dx, ay1 + 0.5 * bh + bh * dy
            pw, ph = bw * math.exp(dw), bh * math.exp(dh)
            x1, x2 = (min(max(v, 0), img_w) for v in (cx - 0.5 * pw, cx + 0.5 * pw))
            y1, y2 = (min(max(v, 0), img_h) for v in (cy - 0.5 * ph, cy + 0.5 * ph))
            if min(x2 - x1, y2 - y1) >= min_size * scale:
                boxes.append((s, [y1, x1, y2, x2]))
        kept = greedy([-k for k in range(len(boxes))],  # already in score order
                      lambda i, j: iou(boxes[i][1], boxes[j][1]), post_nms_topn,
                      nms_threshold)
        for k, i in enumerate(kept):
            rois[img, k], probs[img, k] = boxes[i][1], boxes[i][0]
    return rois, probs


def test_generate_bounding_box_proposals():
    n, h, w, a = 2, 3, 4, 2
    scores = RNG.permutation(n * h * w * a).reshape(n, h, w, a).astype(np.float32) / 48
    deltas = RNG.uniform(-0.3, 0.3, (n, h, w, 4 * a)).astype(np.float32)
    deltas[0, 0, 0, 2] = 10.0  # dh beyond log(1000 / 16) is clipped
    centres = RNG.uniform(0, 40, (h, w, a, 2))
    half = RNG.uniform(2, 12, (h, w, a, 2))
    anchors = np.concatenate([centres - half, centres + half], -1).reshape(h, w, 4 * a)
    anchors = anchors.astype(np.float32)
    image_info = np.array([[40, 36, 1.0, 0, 0], [30, 40, 2.0, 0, 0]], np.float32)
    rois, probs = tf.image.generate_bounding_box_proposals(
        scores, deltas, image_info, anchors, nms_threshold=0.3, pre_nms_topn=30, min_size=3,
        post_nms_topn=40)
    assert rois.op.type == "GenerateBoundingBoxProposals"
    assert rois.shape.as_list() == [2, 40, 4] and probs.shape.as_list() == [2, 40]
    got_rois, got_probs = run([rois, probs])
    want_rois, want_probs = proposals_reference(scores, deltas, image_info, anchors, 0.3, 30,
                                                3, 40)
    assert 0 < np.count_nonzero(want_probs[1]) < 25  # some suppressed or too small
    np.testing.assert_allclose(got_rois, want_rois, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(got_probs, want_probs, rtol=1e-6)

    # One anchor, no deltas: the proposal is the anchor clipped to the image.
    one = tf.image.generate_bounding_box_proposals(
        [[[[0.9]]]], np.zeros([1, 1, 1, 4], np.float32), [[10, 8, 1, 0, 0]],
        [[[-2., 1., 6., 12.]]], min_size=1, post_nms_topn=2)
    np.testing.assert_allclose(run(one[0]), [[[0, 1, 6, 8], [0, 0, 0, 0]]])
    with pytest.raises(ValueError, match="Dimension must be 5 but is 4"):
        tf.image.generate_bounding_box_proposals(scores, deltas, image_info[:, :4], anchors)
    bad = tf.image.generate_bounding_box_proposals(scores, deltas, image_info, anchors,
                                                   pre_nms_topn=0)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="pre_nms_topn should be greater than 0"):
        run(bad)
