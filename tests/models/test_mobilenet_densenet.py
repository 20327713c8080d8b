"""MobileNet v1/v2 and DenseNet-BC from the model zoo.

Parameter counts of every registered model are checked against the published numbers
and against a count worked out here from the papers' tables (graph building only).

Running a network costs XLA compile time, not arithmetic, so the forward passes and
training steps use reduced configs (fewer and thinner layers, set through the
dataclass configs; the full-depth graphs are only built, for the counts and the
UPDATE_OPS checks). Every block type still appears: stride-1 and stride-2 separable
layers; v2's expansion-1 block, strided block and residual block; DenseNet's stem,
dense layers, transition and head. Kernels' random initializers are bypassed by
feeding their initial values from NumPy, so no random-number generator is compiled
and the forward passes can be checked against NumPy re-implementations.
"""

import dataclasses

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.runtime.config import compiler_options_config
from tensorflux.models import densenet, mobilenet
from tensorflux.models.registry import specs

# The session compiles each step once with XLA's default options (no autotuning, which
# would compile every convolution cluster twice).
FAST_COMPILE = compiler_options_config({"xla_cpu_experimental_ynn_fusion_type": None})

V1_TINY = mobilenet.MobileNetV1Config(depth_multiplier=0.25, layers=((1, 64), (2, 128)),
                                      dropout_rate=0.0)
V2_TINY = mobilenet.MobileNetV2Config(depth_multiplier=0.5, last_filters=64,
                                      blocks=((1, 16, 1, 1), (6, 24, 2, 2)))
DENSE_TINY = densenet.DenseNetConfig(blocks=(2, 2), growth_rate=8, stem_filters=16)


# --- parameter counts ---------------------------------------------------------------------

PUBLISHED = {  # trainable parameters at 224x224x3, 1000 classes
    "mobilenet_v1": 4_231_976,
    "mobilenet_v2": 3_504_872,
    "densenet121": 7_978_856,
    "densenet169": 14_149_480,
    "densenet201": 20_013_928,
}


def round8(value):
    """MobileNet v2's channel rounding: nearest multiple of 8, at least 8, and never
    below 90% of `value`."""
    rounded = max(8, int(value + 4) // 8 * 8)
    return rounded + 8 if rounded < 0.9 * value else rounded


def v1_count(alpha, classes=1000):
    width = lambda c: max(int(c * alpha), 8)  # noqa: E731
    c = width(32)
    total = 3 * 3 * 3 * c + 2 * c                       # stem conv + BN gamma/beta
    for f in (64, 128, 128, 256, 256, 512, 512, 512, 512, 512, 512, 1024, 1024):
        f = width(f)
        total += 9 * c + 2 * c + c * f + 2 * f          # depthwise + BN, pointwise + BN
        c = f
    return total + c * classes + classes


def v2_count(alpha, classes=1000):
    c = round8(32 * alpha)
    total = 3 * 3 * 3 * c + 2 * c
    table = ((1, 16, 1), (6, 24, 2), (6, 32, 3), (6, 64, 4), (6, 96, 3), (6, 160, 3),
             (6, 320, 1))
    for t, out, repeats in table:
        out = round8(int(out * alpha))
        for _ in range(repeats):
            e = t * c
            if t != 1:
                total += c * e + 2 * e                  # expand 1x1 + BN
            total += 9 * e + 2 * e + e * out + 2 * out  # depthwise + BN, project + BN
            c = out
    last = round8(1280 * alpha) if alpha > 1 else 1280
    return total + c * last + 2 * last + last * classes + classes


def densenet_count(blocks, k=32, classes=1000):
    c = 64
    total = 7 * 7 * 3 * c + 2 * c
    for b, layers in enumerate(blocks):
        for _ in range(layers):
            total += 2 * c + c * 4 * k + 2 * 4 * k + 9 * 4 * k * k
            c += k
        if b < len(blocks) - 1:
            total += 2 * c + c * (c // 2)
            c //= 2
    return total + 2 * c + c * classes + classes


EXPECTED = {
    "mobilenet_v1": v1_count(1.0), "mobilenet_v1_050": v1_count(0.5),
    "mobilenet_v1_025": v1_count(0.25), "mobilenet_v2": v2_count(1.0),
    "mobilenet_v2_035": v2_count(0.35), "mobilenet_v2_140": v2_count(1.4),
    "densenet121": densenet_count((6, 12, 24, 16)),
    "densenet169": densenet_count((6, 12, 32, 32)),
    "densenet201": densenet_count((6, 12, 48, 32)),
}


def trainable_count():
    return sum(int(np.prod(v.shape.as_list())) for v in tf.trainable_variables())


def test_hand_counts_agree_with_published():
    for name, count in PUBLISHED.items():
        assert EXPECTED[name] == count, name
    # The v1 paper's Table 6 rounds to 0.1M: 1.3M at alpha 0.5, 0.5M at 0.25.
    assert round(EXPECTED["mobilenet_v1_050"] / 1e6, 1) == 1.3
    assert round(EXPECTED["mobilenet_v1_025"] / 1e6, 1) == 0.5


def test_registered_names():
    ours = {n for n, s in specs().items() if s.family in ("mobilenet", "densenet")}
    assert ours == set(EXPECTED)
    for name in ours:
        assert specs()[name].input_shape == (224, 224, 3)
        assert specs()[name].num_classes == 1000
        assert specs()[name].kind == "image_classifier"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_parameter_count(name):
    spec = specs()[name]
    images = tf.placeholder(tf.float32, [None, *spec.input_shape])
    logits = spec.build(images, spec.config, num_classes=spec.num_classes, training=False)
    assert logits.shape.as_list() == [None, 1000]
    assert trainable_count() == EXPECTED[name]


# --- UPDATE_OPS ---------------------------------------------------------------------------

@pytest.mark.parametrize("name, batch_norms", [
    ("mobilenet_v1", 1 + 2 * 13),                        # stem + dw/pw per layer
    ("mobilenet_v2", 2 + 2 + 3 * 16),                    # stem, last conv, first block, 16 more
    ("densenet121", 1 + 2 * (6 + 12 + 24 + 16) + 3 + 1),  # stem, 2 per layer, transitions, head
])
def test_update_ops_hold_the_batch_norm_updates(name, batch_norms):
    spec = specs()[name]
    images = tf.placeholder(tf.float32, [None, 224, 224, 3])
    spec.build(images, spec.config, num_classes=1000, training=True)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2 * batch_norms
    moving = sorted(v.op.name for v in tf.global_variables() if "moving_" in v.op.name)
    assert len(moving) == 2 * batch_norms
    # Each update (an assign's output, as TF1) moves one moving statistic, and each
    # statistic has one update.
    targets = sorted(t.op.inputs[0].op.name for t in updates)
    assert targets == moving


def test_inference_graph_has_no_updates():
    images = tf.placeholder(tf.float32, [None, 32, 32, 3])
    mobilenet.mobilenet_v2(images, V2_TINY, num_classes=10, training=False)
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []


# --- NumPy reference ----------------------------------------------------------------------

def same_pads(size, k, stride):
    out = -(-size // stride)
    total = max((out - 1) * stride + k - size, 0)
    return out, (total // 2, total - total // 2)


def np_conv(x, w, stride=1, depthwise=False):
    """SAME-padded NHWC convolution; w is HWIO, or HW C 1 when `depthwise`."""
    k = w.shape[0]
    out_h, pad_h = same_pads(x.shape[1], k, stride)
    out_w, pad_w = same_pads(x.shape[2], k, stride)
    x = np.pad(x, [(0, 0), pad_h, pad_w, (0, 0)])
    out = np.zeros(x.shape[:1] + (out_h, out_w, x.shape[3] if depthwise else w.shape[3]))
    for i in range(k):
        for j in range(k):
            patch = x[:, i:i + stride * (out_h - 1) + 1:stride,
                      j:j + stride * (out_w - 1) + 1:stride, :]
            out += patch * w[i, j, :, 0] if depthwise else patch @ w[i, j]
    return out


def np_pool(x, k, stride, reduce, same):
    if same:
        out_h, pad_h = same_pads(x.shape[1], k, stride)
        out_w, pad_w = same_pads(x.shape[2], k, stride)
        x = np.pad(x, [(0, 0), pad_h, pad_w, (0, 0)], constant_values=-np.inf)
    else:
        out_h, out_w = (x.shape[1] - k) // stride + 1, (x.shape[2] - k) // stride + 1
    windows = [x[:, i:i + stride * (out_h - 1) + 1:stride, j:j + stride * (out_w - 1) + 1:stride]
               for i in range(k) for j in range(k)]
    return reduce(windows, axis=0)


def np_bn(x, epsilon):
    # Inference with fresh statistics: mean 0, variance 1, gamma 1, beta 0.
    return x / np.sqrt(1.0 + epsilon)


def relu(x):
    return np.maximum(x, 0.0)


def relu6(x):
    return np.clip(x, 0.0, 6.0)


def np_logits(x, w):
    return x.mean(axis=(1, 2)) @ w      # dense bias starts at 0


def np_mobilenet_v1(x, w, eps):
    x = relu(np_bn(np_conv(x, w["MobilenetV1/conv1/kernel"], 2), eps))
    for i, (stride, _) in enumerate(V1_TINY.layers, start=1):
        x = np_conv(x, w[f"MobilenetV1/conv_dw_{i}/depthwise_kernel"], stride, depthwise=True)
        x = relu(np_bn(x, eps))
        x = relu(np_bn(np_conv(x, w[f"MobilenetV1/conv_pw_{i}/kernel"]), eps))
    return np_logits(x, w["MobilenetV1/Logits/kernel"])


def np_mobilenet_v2(x, w, eps):
    p = "MobilenetV2/"
    x = relu6(np_bn(np_conv(x, w[p + "Conv1/kernel"], 2), eps))
    # (prefix, expands, stride, residual) of V2_TINY's three blocks
    for prefix, expands, stride, residual in (("expanded_conv_", False, 1, False),
                                              ("block_1_", True, 2, False),
                                              ("block_2_", True, 1, True)):
        y = x
        if expands:
            y = relu6(np_bn(np_conv(y, w[p + prefix + "expand/kernel"]), eps))
        y = np_conv(y, w[p + prefix + "depthwise/depthwise_kernel"], stride, depthwise=True)
        y = relu6(np_bn(y, eps))
        y = np_bn(np_conv(y, w[p + prefix + "project/kernel"]), eps)
        x = x + y if residual else y
    x = relu6(np_bn(np_conv(x, w[p + "Conv_1/kernel"]), eps))
    return np_logits(x, w[p + "Logits/kernel"])


def np_densenet(x, w, eps):
    p = "densenet121/"

    def unit(x, name):
        return np_conv(relu(np_bn(x, eps)), w[p + name + "/Conv/kernel"])

    x = relu(np_bn(np_conv(x, w[p + "conv1/Conv/kernel"], 2), eps))
    x = np_pool(x, 3, 2, np.max, same=True)
    for b in (1, 2):
        for layer in (1, 2):
            name = f"dense_block{b}/conv_block{layer}"
            x = np.concatenate([x, unit(unit(x, name + "/x1"), name + "/x2")], axis=3)
        if b == 1:
            x = np_pool(unit(x, "transition_block1/blk"), 2, 2, np.mean, same=False)
    return np_logits(relu(np_bn(x, eps)), w[p + "logits/kernel"])


# --- running the reduced models -----------------------------------------------------------

def numpy_kernels(rng):
    """He-normal NumPy values for every kernel (conv, depthwise, dense) in the graph."""
    values = {}
    for v in tf.global_variables():
        if v.op.name.endswith("kernel"):
            shape = v.shape.as_list()
            fan_in = np.prod(shape[:2]) if "depthwise" in v.op.name else np.prod(shape[:-1])
            values[v] = (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    return values


def initialize(sess, kernels):
    sess.run(tf.global_variables_initializer(),
             {v.initial_value: value for v, value in kernels.items()})


FAMILIES = {  # name: (model_fn, registered model, reduced config, NumPy forward)
    "mobilenet_v1": (mobilenet.model_fn, "mobilenet_v1", V1_TINY, np_mobilenet_v1),
    "mobilenet_v2": (mobilenet.model_fn, "mobilenet_v2", V2_TINY, np_mobilenet_v2),
    "densenet": (densenet.model_fn, "densenet121", DENSE_TINY, np_densenet),
}

# Compiling a training step costs most per batch norm (its forward + backward), so the
# training tests shrink the reduced configs once more: one layer or block of each kind.
TRAIN_CONFIGS = {
    "mobilenet_v1": dataclasses.replace(V1_TINY, layers=((2, 64),)),
    "mobilenet_v2": dataclasses.replace(V2_TINY, blocks=((1, 16, 1, 1), (6, 16, 1, 1))),
    "densenet": dataclasses.replace(DENSE_TINY, blocks=(1, 1)),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_forward_matches_numpy(family):
    model_fn, name, config, reference = FAMILIES[family]
    rng = np.random.RandomState(0)
    images = rng.uniform(-1, 1, (2, 32, 32, 3)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 32, 32, 3])
    out = model_fn(x, None, "infer", {"model": name, "config": config, "num_classes": 10})
    assert out.mode == "infer" and out.loss is None and out.train_op is None
    assert set(out.predictions) == {"classes", "probabilities", "logits"}
    kernels = numpy_kernels(rng)
    with tf.Session(config=FAST_COMPILE) as sess:
        initialize(sess, kernels)
        logits, predictions = sess.run([out.predictions["logits"],
                                         out.predictions["classes"]], {x: images})
    assert logits.shape == (2, 10)
    expected = reference(images.astype(np.float64),
                         {v.op.name: value.astype(np.float64) for v, value in kernels.items()},
                         config.batch_norm_epsilon)
    np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(predictions, expected.argmax(axis=1))


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_training_steps_reduce_the_loss(family):
    model_fn, name, _, _ = FAMILIES[family]
    config = TRAIN_CONFIGS[family]
    rng = np.random.RandomState(1)
    images = rng.uniform(-1, 1, (8, 32, 32, 3)).astype(np.float32)
    labels = rng.randint(0, 10, 8)
    x = tf.placeholder(tf.float32, [8, 32, 32, 3])
    y = tf.placeholder(tf.int64, [8])
    out = model_fn(x, y, "train", {"model": name, "config": config, "num_classes": 10,
                                   "learning_rate": 0.01})
    moving_mean = next(v for v in tf.global_variables() if v.op.name.endswith("moving_mean"))
    with tf.Session(config=FAST_COMPILE) as sess:
        initialize(sess, numpy_kernels(rng))
        losses = [sess.run([out.loss, out.train_op], {x: images, y: labels})[0]
                  for _ in range(4)]
        step, mean = sess.run([tf.train.get_global_step(), moving_mean])
    assert all(np.isfinite(losses))
    assert losses[-1] < losses[0], losses
    assert step == 4
    # The train op ran the batch-norm updates: the first moving mean left its zeros.
    assert np.abs(mean).max() > 0
    # Weight decay is in the loss: one L2 term per conv/dense kernel, none for depthwise.
    penalties = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    kernels = [v for v in tf.trainable_variables()
               if v.op.name.endswith("kernel") and "depthwise" not in v.op.name]
    assert len(penalties) == len(kernels)


def test_eval_mode_has_loss_but_no_train_op():
    x = tf.placeholder(tf.float32, [2, 32, 32, 3])
    y = tf.placeholder(tf.int64, [2])
    out = densenet.model_fn(x, y, "eval", {"config": DENSE_TINY, "num_classes": 10})
    assert out.train_op is None and out.loss.shape.as_list() == []
    assert set(out.eval_metric_ops) == {"accuracy", "top_5_accuracy"}
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    with pytest.raises(ValueError, match="mode must be"):
        mobilenet.model_fn(x, y, "predict", {})


def test_config_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        V1_TINY.depth_multiplier = 2.0
