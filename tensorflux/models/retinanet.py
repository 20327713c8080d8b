"""RetinaNet (Lin et al., "Focal Loss for Dense Object Detection", 2017) on a ResNet-50 FPN.

    images (N, H, W, 3)
      └─ resnet.feature_maps ─► C3, C4, C5           strides 8, 16, 32
           └─ FPN ─► P3 .. P7 (256 channels)         strides 8 .. 128
                └─ class subnet, box subnet          shared across levels
                     ─► per level: (N, h, w, A * num_classes) logits, (N, h, w, A * 4) deltas

A = 9 anchors per location (3 scales x 3 aspect ratios). What this file holds, top to
bottom: the config, anchors (NumPy: they depend only on the image size), box encoding,
target assignment (NumPy, for the input pipeline), the network, the losses, inference
(`detect`: decode, per-class NMS) and `model_fn`, an Estimator-style entry point.

Conventions: boxes are [y1, x1, y2, x2] in input-image pixels, as tf.image uses. Anchors
and network outputs are flattened level by level, then row, column, anchor, so output
k of `class_logits` / `box_deltas` belongs to anchor k of `generate_anchors`.

Choices that follow the TPU reference implementation (tensorflow/tpu, models/official/
retinanet) rather than the paper: the box loss is Huber with delta 0.1 on unscaled
deltas, weighted 50 and normalised by 4 x positives; every ground-truth box is matched to
its best anchor even below 0.5 IoU; an L2 weight decay of 1e-4 on kernels. As in the
paper: P6 is computed from C5 (`p6_input="P5"` gives the TPU/torchvision variant), no
batch normalization in the FPN or heads, and NMS at inference is per class.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import tensorflux as tf
from tensorflux.models.registry import ModelSpec, register


# -- config -----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class RetinaNetConfig:
    depth: int = 50                      # ResNet backbone depth
    min_level: int = 3                   # P3 (stride 8) .. (3 to 5)
    max_level: int = 7                   # .. P7 (stride 128) (5 to 7)
    num_scales: int = 3                  # octave scales 2^0, 2^(1/3), 2^(2/3)
    aspect_ratios: tuple = (0.5, 1.0, 2.0)   # height / width of an anchor, area kept
    anchor_scale: float = 4.0            # base anchor side = anchor_scale * stride
    fpn_channels: int = 256
    p6_input: str = "C5"                 # "C5" (paper) or "P5" (TPU reference, torchvision)
    head_convs: int = 4                  # conv3x3 + ReLU layers in each subnet
    prior_probability: float = 0.01      # initial foreground probability of the classifier
    # Training targets and losses.
    positive_iou: float = 0.5            # IoU >= this: the anchor is positive
    negative_iou: float = 0.4            # IoU < this: background; in between: ignored
    match_best_anchor: bool = True       # each box also claims its best anchor (TPU reference)
    focal_alpha: float = 0.25
    focal_gamma: float = 2.0
    huber_delta: float = 0.1
    box_loss_weight: float = 50.0
    weight_decay: float = 1e-4
    # Inference.
    pre_nms_top_k: int = 1000            # candidates kept per level before NMS
    score_threshold: float = 0.05
    nms_iou_threshold: float = 0.5
    max_detections: int = 100

    @property
    def num_anchors(self) -> int:
        return self.num_scales * len(self.aspect_ratios)

    @property
    def levels(self) -> range:
        return range(self.min_level, self.max_level + 1)


# Class targets: a class id for positives, these for the rest (one_hot(-1) is all zeros).
BACKGROUND = -1
IGNORE = -2

# tf.estimator.ModeKeys' values (tensorflux has no tf.estimator).
TRAIN, EVAL, PREDICT = "train", "eval", "infer"


# -- anchors ----------------------------------------------------------------------------------
def feature_size(image_size, level):
    """(height, width) of level `level` for an image of `image_size`: each stride-2 layer
    with SAME (or TF's fixed) padding rounds up, so it is ceil-halving `level` times."""
    height, width = image_size
    for _ in range(level):
        height, width = -(-height // 2), -(-width // 2)
    return height, width


def anchor_shapes(config):
    """(A, 2) anchor (height, width) for stride 1, scales outer and ratios inner."""
    shapes = []
    for octave in range(config.num_scales):
        side = config.anchor_scale * 2.0 ** (octave / config.num_scales)
        for ratio in config.aspect_ratios:
            # height / width = ratio and height * width = side ** 2.
            shapes.append((side * math.sqrt(ratio), side / math.sqrt(ratio)))
    return np.array(shapes, np.float64)


def level_anchors(image_size, level, config):
    """(h * w * A, 4) anchors of one level, centred on the cells of its feature map."""
    stride = 2 ** level
    height, width = feature_size(image_size, level)
    cy = (np.arange(height) + 0.5) * stride
    cx = (np.arange(width) + 0.5) * stride
    cy, cx = np.meshgrid(cy, cx, indexing="ij")                # (h, w)
    sizes = anchor_shapes(config) * stride                     # (A, 2)
    half_h = sizes[:, 0] / 2
    half_w = sizes[:, 1] / 2
    boxes = np.stack([cy[..., None] - half_h, cx[..., None] - half_w,
                      cy[..., None] + half_h, cx[..., None] + half_w], axis=-1)  # (h, w, A, 4)
    return boxes.reshape(-1, 4)


def generate_anchors(image_size, config=None):
    """(num_anchors, 4) float32 [y1, x1, y2, x2] anchors of every level, in output order."""
    config = config or RetinaNetConfig()
    return np.concatenate([level_anchors(image_size, level, config)
                           for level in config.levels]).astype(np.float32)


# -- boxes ------------------------------------------------------------------------------------
# exp(th) of a decoded box is capped at 1000/16 (Detectron's clip) so an untrained
# network cannot overflow float32.
_MAX_LOG_SCALE = math.log(1000.0 / 16)


def _centers(boxes):
    """(cy, cx, h, w) of [..., 4] NumPy boxes."""
    y1, x1, y2, x2 = (boxes[..., i] for i in range(4))
    return (y1 + y2) / 2, (x1 + x2) / 2, y2 - y1, x2 - x1


def encode_boxes(boxes, anchors):
    """NumPy: (ty, tx, th, tw) of `boxes` relative to `anchors` (both [..., 4]):
    ty = (y - ya) / ha, tx = (x - xa) / wa, th = log(h / ha), tw = log(w / wa)."""
    y, x, h, w = _centers(np.asarray(boxes, np.float64))
    ya, xa, ha, wa = _centers(np.asarray(anchors, np.float64))
    return np.stack([(y - ya) / ha, (x - xa) / wa, np.log(h / ha), np.log(w / wa)],
                    axis=-1).astype(np.float32)


def decode_boxes(deltas, anchors):
    """Graph: the inverse of `encode_boxes`; deltas and anchors [..., 4] (tensors or arrays)."""
    deltas = tf.convert_to_tensor(deltas, tf.float32)
    y1, x1, y2, x2 = tf.unstack(tf.convert_to_tensor(anchors, tf.float32), 4, axis=-1)
    ha, wa = y2 - y1, x2 - x1
    ya, xa = y1 + ha / 2, x1 + wa / 2
    ty, tx, th, tw = tf.unstack(deltas, 4, axis=-1)
    y = ty * ha + ya
    x = tx * wa + xa
    h = tf.exp(tf.minimum(th, _MAX_LOG_SCALE)) * ha
    w = tf.exp(tf.minimum(tw, _MAX_LOG_SCALE)) * wa
    return tf.stack([y - h / 2, x - w / 2, y + h / 2, x + w / 2], axis=-1)


def iou_matrix(a, b):
    """NumPy: (len(a), len(b)) intersection over union of [y1, x1, y2, x2] boxes."""
    a = np.asarray(a, np.float64)[:, None]
    b = np.asarray(b, np.float64)[None]
    inter_h = np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None)
    inter_w = np.clip(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0, None)
    inter = inter_h * inter_w
    area = lambda t: (t[..., 2] - t[..., 0]) * (t[..., 3] - t[..., 1])  # noqa: E731
    union = area(a) + area(b) - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


# -- target assignment (NumPy, per image) -----------------------------------------------------
def assign_targets(anchors, gt_boxes, gt_classes, config=None):
    """Class and box targets of every anchor for one image.

    gt_boxes (G, 4) [y1, x1, y2, x2]; gt_classes (G,) ints, where a negative class marks a
    padding row (fixed-size label arrays). Returns cls_targets (num_anchors,) int32 - the
    class of the matched box, BACKGROUND (-1) or IGNORE (-2) - and box_targets
    (num_anchors, 4) float32, encoded deltas for positives and zeros elsewhere.
    """
    config = config or RetinaNetConfig()
    gt_boxes = np.asarray(gt_boxes, np.float32).reshape(-1, 4)
    gt_classes = np.asarray(gt_classes).reshape(-1)
    real = gt_classes >= 0
    gt_boxes, gt_classes = gt_boxes[real], gt_classes[real]
    num = len(anchors)
    cls_targets = np.full(num, BACKGROUND, np.int32)
    box_targets = np.zeros((num, 4), np.float32)
    if len(gt_boxes) == 0:
        return cls_targets, box_targets

    iou = iou_matrix(anchors, gt_boxes)                       # (num_anchors, G)
    match = iou.argmax(axis=1)
    best = iou.max(axis=1)
    positive = best >= config.positive_iou
    cls_targets[best >= config.negative_iou] = IGNORE
    if config.match_best_anchor:
        # A box whose anchors all overlap it < 0.5 would otherwise never be learned; later
        # boxes win an anchor two boxes both claim, an arbitrary but fixed rule.
        for g, a in enumerate(iou.argmax(axis=0)):
            if iou[a, g] > 0:
                match[a], positive[a] = g, True
    cls_targets[positive] = gt_classes[match[positive]]
    box_targets[positive] = encode_boxes(gt_boxes[match[positive]], anchors[positive])
    return cls_targets, box_targets


def assign_batch_targets(anchors, gt_boxes, gt_classes, config=None):
    """`assign_targets` over a batch: (B, G, 4) boxes and (B, G) classes (pad with -1)
    -> (B, num_anchors) cls_targets and (B, num_anchors, 4) box_targets."""
    pairs = [assign_targets(anchors, b, c, config) for b, c in zip(gt_boxes, gt_classes)]
    return np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs])


# -- network ----------------------------------------------------------------------------------
def _conv(x, filters, name, kernel_size=3, strides=1, **kwargs):
    return tf.layers.conv2d(x, filters, kernel_size, strides=strides, padding="same",
                            name=name, **kwargs)


def _upsample_to(x, like):
    """Nearest-neighbour upsampling of x to like's spatial size. For the ceil-halved
    sizes of the backbone this equals 2x repetition cropped to size."""
    height, width = like.shape.as_list()[1:3]
    return tf.image.resize_nearest_neighbor(x, [height, width])


def fpn(features, config):
    """{level: (N, h, w, fpn_channels)} for P3..P7 from {"C3", "C4", "C5"}."""
    channels = config.fpn_channels
    with tf.variable_scope("fpn"):
        laterals = {level: _conv(features[f"C{level}"], channels, f"lateral_p{level}", 1)
                    for level in (3, 4, 5)}
        # Top-down pathway: coarse, semantically strong maps are added into finer ones.
        merged = {5: laterals[5]}
        for level in (4, 3):
            merged[level] = laterals[level] + _upsample_to(merged[level + 1], laterals[level])
        # The 3x3 convs reduce the aliasing of the upsampled sums.
        pyramid = {level: _conv(merged[level], channels, f"post_hoc_p{level}")
                   for level in (3, 4, 5) if level in config.levels}
        # P6 and P7 see larger objects: stride-2 convs on top, built only when used.
        if config.max_level >= 6:
            p6_source = features["C5"] if config.p6_input == "C5" else pyramid[5]
            pyramid[6] = _conv(p6_source, channels, "p6", strides=2)
        if config.max_level >= 7:
            pyramid[7] = _conv(tf.nn.relu(pyramid[6]), channels, "p7", strides=2)
    return {level: pyramid[level] for level in config.levels}


def _subnet(x, outputs, config, scope, bias_initializer):
    """head_convs conv3x3+ReLU then a conv3x3 to `outputs` channels. The variables live in
    `scope` with AUTO_REUSE, so every pyramid level shares one set of weights."""
    init = tf.random_normal_initializer(stddev=0.01)
    with tf.variable_scope(scope, reuse=tf.AUTO_REUSE):
        for i in range(config.head_convs):
            x = _conv(x, config.fpn_channels, f"conv{i}", activation=tf.nn.relu,
                      kernel_initializer=init)
        return _conv(x, outputs, "predict", kernel_initializer=init,
                     bias_initializer=bias_initializer)


def heads(pyramid, config, num_classes):
    """Per level: (N, h, w, A * num_classes) class logits and (N, h, w, A * 4) box deltas."""
    # The bias starts every anchor at foreground probability pi: with pi = 0.01 the
    # thousands of easy negatives do not swamp the loss in the first steps.
    prior = -math.log((1 - config.prior_probability) / config.prior_probability)
    class_outputs, box_outputs = {}, {}
    for level, feature in pyramid.items():
        class_outputs[level] = _subnet(feature, config.num_anchors * num_classes, config,
                                       "class_net", tf.constant_initializer(prior))
        box_outputs[level] = _subnet(feature, config.num_anchors * 4, config, "box_net",
                                     tf.zeros_initializer())
    return class_outputs, box_outputs


def _flatten(outputs, width):
    """Concatenates {level: (N, h, w, A * width)} into (N, sum h * w * A, width)."""
    return tf.concat([tf.reshape(t, [tf.shape(t)[0], -1, width]) for t in outputs.values()],
                     axis=1)


def build_from_features(features, config, *, num_classes, training=False):
    """The FPN and heads on backbone features {"C3", "C4", "C5"}; see `build`."""
    del training  # no batch norm or dropout after the backbone
    with tf.variable_scope("retinanet"):
        class_outputs, box_outputs = heads(fpn(features, config), config, num_classes)
    return {
        "class_outputs": class_outputs,            # {level: (N, h, w, A * C)}
        "box_outputs": box_outputs,                # {level: (N, h, w, A * 4)}
        "class_logits": _flatten(class_outputs, num_classes),   # (N, num_anchors, C)
        "box_deltas": _flatten(box_outputs, 4),                  # (N, num_anchors, 4)
    }


def build(inputs, config, *, num_classes, training=False):
    """RetinaNet on NHWC float images; returns `build_from_features`'s dict."""
    from tensorflux.models import resnet  # the backbone module may load after this one
    features = resnet.feature_maps(inputs, depth=config.depth, training=training)
    return build_from_features(features, config, num_classes=num_classes, training=training)


# -- losses -----------------------------------------------------------------------------------
def focal_loss(logits, cls_targets, num_classes, alpha=0.25, gamma=2.0):
    """Per-element focal loss (N, A, C): alpha_t * (1 - p_t) ** gamma * CE, zero at
    ignored anchors. cls_targets (N, A) int: class, BACKGROUND or IGNORE."""
    labels = tf.one_hot(tf.maximum(cls_targets, -1), num_classes, dtype=tf.float32)
    cross_entropy = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
    p = tf.sigmoid(logits)
    p_t = labels * p + (1 - labels) * (1 - p)
    alpha_t = labels * alpha + (1 - labels) * (1 - alpha)
    loss = alpha_t * tf.pow(1 - p_t, gamma) * cross_entropy
    valid = tf.cast(tf.not_equal(cls_targets, IGNORE), tf.float32)
    return loss * valid[..., None]


def num_positives(cls_targets):
    """Positive anchors in the batch, at least 1 so an image without boxes divides by 1."""
    return tf.maximum(tf.reduce_sum(tf.cast(cls_targets >= 0, tf.float32)), 1.0)


def box_loss(box_deltas, box_targets, cls_targets, delta=0.1):
    """Huber loss summed over the coordinates of positive anchors (not yet normalised)."""
    positive = tf.cast(cls_targets >= 0, tf.float32)[..., None]
    return tf.losses.huber_loss(box_targets, box_deltas, weights=positive, delta=delta,
                                reduction=tf.losses.Reduction.SUM)


def detection_loss(outputs, cls_targets, box_targets, config, num_classes):
    """(total, class loss, box loss), each normalised by the positive anchors."""
    normalizer = num_positives(cls_targets)
    cls_loss = tf.reduce_sum(focal_loss(outputs["class_logits"], cls_targets, num_classes,
                                        config.focal_alpha, config.focal_gamma)) / normalizer
    # Four coordinates per positive, as the TPU reference normalises.
    reg_loss = box_loss(outputs["box_deltas"], box_targets, cls_targets,
                        config.huber_delta) / (4.0 * normalizer)
    return cls_loss + config.box_loss_weight * reg_loss, cls_loss, reg_loss


# -- inference --------------------------------------------------------------------------------
def _level_candidates(logits, deltas, anchors, num_classes, top_k):
    """Top-k (score, class, decoded box) of one image at one level.
    logits (h, w, A * C), deltas (h, w, A * 4), anchors (h * w * A, 4) NumPy."""
    scores = tf.reshape(tf.sigmoid(logits), [-1])             # (h * w * A * C,)
    k = min(top_k, len(anchors) * num_classes)
    scores, flat = tf.nn.top_k(scores, k=k)
    anchor_index = flat // num_classes
    classes = flat % num_classes
    boxes = decode_boxes(tf.gather(tf.reshape(deltas, [-1, 4]), anchor_index),
                         tf.gather(tf.constant(anchors), anchor_index))
    return scores, classes, boxes


def _pad_to(x, size):
    """Zero-pads the first dimension of x (data-dependent length) up to `size`."""
    pad = [[0, size - tf.shape(x)[0]]] + [[0, 0]] * (x.shape.ndims - 1)
    # The reshape only restores the static shape that the padding makes known.
    return tf.reshape(tf.pad(x, pad), [size] + x.shape.as_list()[1:])


def _detect_image(class_outputs, box_outputs, image_size, config, num_classes):
    """Detections of one image: boxes (max, 4), scores (max,), classes (max,), count."""
    parts = [_level_candidates(class_outputs[level], box_outputs[level],
                               level_anchors(image_size, level, config).astype(np.float32),
                               num_classes, config.pre_nms_top_k)
             for level in config.levels]
    scores, classes, boxes = (tf.concat(list(p), axis=0) for p in zip(*parts))
    height, width = image_size
    boxes = _clip(boxes, height, width)
    # Per-class NMS in one call: shifting each class's boxes by class * (side + 1) makes
    # boxes of different classes disjoint, so only same-class boxes suppress each other.
    # Greedy selection stops at max_detections, which keeps the highest-scoring survivors,
    # as per-class NMS followed by a global top-k does.
    offset = tf.cast(classes, tf.float32)[:, None] * float(max(height, width) + 1)
    keep = tf.image.non_max_suppression(boxes + offset, scores, config.max_detections,
                                        config.nms_iou_threshold, config.score_threshold)
    count = tf.size(keep)
    return (_pad_to(tf.gather(boxes, keep), config.max_detections),
            _pad_to(tf.gather(scores, keep), config.max_detections),
            _pad_to(tf.gather(classes, keep), config.max_detections), count)


def _clip(boxes, height, width):
    """Clips [y1, x1, y2, x2] boxes to the image."""
    limit = tf.constant([height, width, height, width], tf.float32)
    return tf.minimum(tf.maximum(boxes, 0.0), limit)


def detect(outputs, image_size, config=None, *, num_classes):
    """Inference: per image, the top `pre_nms_top_k` (anchor, class) scores of each level,
    decoded and clipped to the image, then per-class NMS (IoU 0.5, score > 0.05) keeping
    at most `max_detections`.

    outputs: `build`'s dict (a static batch size is needed: NMS runs per image on the
    host). Returns a dict like tf.image.combined_non_max_suppression's, zero-padded:
    boxes (N, max, 4) [y1, x1, y2, x2] pixels, scores (N, max), classes (N, max) int32,
    num_detections (N,) int32.
    """
    config = config or RetinaNetConfig()
    first = outputs["class_outputs"][config.min_level]
    batch = first.shape[0].value if hasattr(first.shape[0], "value") else first.shape[0]
    if batch is None:
        raise ValueError("detect needs a static batch size (NMS runs once per image); "
                         f"received class outputs of shape {first.shape}")
    per_image = []
    for b in range(batch):
        per_image.append(_detect_image({lv: t[b] for lv, t in outputs["class_outputs"].items()},
                                       {lv: t[b] for lv, t in outputs["box_outputs"].items()},
                                       image_size, config, num_classes))
    boxes, scores, classes, counts = zip(*per_image)
    return {"boxes": tf.stack(boxes), "scores": tf.stack(scores),
            "classes": tf.stack(classes), "num_detections": tf.stack(counts)}


# -- model_fn ---------------------------------------------------------------------------------


def _weight_decay(rate):
    """rate * sum of L2 losses of conv kernels (biases and batch-norm scales are exempt)."""
    kernels = [v for v in tf.trainable_variables() if "kernel" in v.op.name]
    if not kernels or rate == 0:
        return tf.constant(0.0)
    return rate * tf.add_n([tf.nn.l2_loss(v) for v in kernels])


def model_fn(features, labels, mode, params):
    """Estimator-style entry: features (N, H, W, 3) images; labels None or a dict of
    `assign_batch_targets`'s "cls_targets" (N, A) and "box_targets" (N, A, 4); mode TRAIN,
    EVAL or PREDICT; params: "num_classes", and optionally "config", "learning_rate",
    "momentum" and "feature_fn" (images, training -> {"C3", "C4", "C5"}, replacing the
    ResNet backbone). Returns a tf.estimator.EstimatorSpec (predictions, loss, train_op)."""
    config = params.get("config", RetinaNetConfig())
    num_classes = params["num_classes"]
    training = mode == TRAIN
    feature_fn = params.get("feature_fn")
    if feature_fn is None:
        outputs = build(features, config, num_classes=num_classes, training=training)
    else:
        outputs = build_from_features(feature_fn(features, training), config,
                                      num_classes=num_classes, training=training)
    if mode == PREDICT:
        image_size = tuple(features.shape.as_list()[1:3])
        return tf.estimator.EstimatorSpec(mode, predictions=detect(
            outputs, image_size, config, num_classes=num_classes))

    total, cls_loss, reg_loss = detection_loss(outputs, labels["cls_targets"],
                                               labels["box_targets"], config, num_classes)
    loss = total + _weight_decay(config.weight_decay)
    predictions = {"class_loss": cls_loss, "box_loss": reg_loss}
    train_op = None
    if training:
        optimizer = tf.train.MomentumOptimizer(params.get("learning_rate", 0.01),
                                               params.get("momentum", 0.9))
        # Batch-norm moving averages of the backbone update with each step.
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train_op = optimizer.minimize(loss, tf.train.get_or_create_global_step())
    return tf.estimator.EstimatorSpec(mode, predictions=predictions, loss=loss,
                                      train_op=train_op)


register(ModelSpec(name="retinanet50", family="retinanet", kind="detector",
                   config=RetinaNetConfig(), build=build, input_shape=(640, 640, 3),
                   num_classes=80))
