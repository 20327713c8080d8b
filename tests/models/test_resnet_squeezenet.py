"""ResNet and SqueezeNet from the model zoo.

Parameter counts are checked against the published numbers (and, for the CIFAR nets,
against a count worked out by hand from the paper's architecture). Forward passes are
checked against NumPy re-implementations: at initialization the last batch norm of
every residual block has gamma = 0, so each block reduces to its shortcut and a
ResNet's logits can be written down in a few lines.

XLA compile time, not arithmetic, is what these tests spend, so each network that runs
in a Session is built once (a module fixture with its own graph) and compiles two
executables: the initializer and one step. Kernels' random initializers are bypassed
by feeding their initial values from NumPy (TF1 lets any tensor be fed): the
expectations then do not depend on tensorflux's RNG, and no random-number generators
need compiling.
"""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.runtime.config import compiler_options_config
from tensorflux.models import resnet, squeezenet  # noqa: F401  (registers the models)
from tensorflux.models.registry import specs

BN_EPSILON = 1e-5


# --- NumPy reference pieces --------------------------------------------------------------

def np_conv(x, w, stride=1, pad=(0, 0)):
    """NHWC x, HWIO w; `pad` zeros before/after on both spatial axes."""
    x = np.pad(x, [(0, 0), pad, pad, (0, 0)])
    k = w.shape[0]
    out_h = (x.shape[1] - k) // stride + 1
    out_w = (x.shape[2] - k) // stride + 1
    out = np.zeros((x.shape[0], out_h, out_w, w.shape[3]), np.float64)
    for i in range(k):
        for j in range(k):
            patch = x[:, i:i + stride * (out_h - 1) + 1:stride,
                      j:j + stride * (out_w - 1) + 1:stride, :]
            out += patch @ w[i, j]
    return out


def np_max_pool(x, k, stride, pad=(0, 0)):
    x = np.pad(x, [(0, 0), pad, pad, (0, 0)], constant_values=-np.inf)
    out_h = (x.shape[1] - k) // stride + 1
    out_w = (x.shape[2] - k) // stride + 1
    windows = [x[:, i:i + stride * (out_h - 1) + 1:stride,
                 j:j + stride * (out_w - 1) + 1:stride, :]
               for i in range(k) for j in range(k)]
    return np.max(windows, axis=0)


def relu(x):
    return np.maximum(x, 0.0)


def softmax_cross_entropy(logits, labels):
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -log_probs[np.arange(len(labels)), labels].mean()


def he_normal(shape, rng):
    fan_in = np.prod(shape[:-1])
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def trainable_count():
    return sum(int(np.prod(v.shape.as_list())) for v in tf.trainable_variables())


def fed_kernels(rng):
    """NumPy initial values for every kernel in the default graph, keyed by variable
    name: He-normal for convolutions, N(0, 0.01) for dense layers and classifiers."""
    values = {}
    for v in tf.global_variables():
        if v.op.name.endswith("kernel"):
            shape = v.shape.as_list()
            small = v.op.name.endswith(("logits/kernel", "classifier/kernel"))
            values[v.op.name] = ((rng.standard_normal(shape) * 0.01).astype(np.float32)
                                 if small else he_normal(shape, rng))
    return values


def session(graph=None):
    """A Session that compiles each run once with XLA's default options: by default the
    runtime compiles convolution runs a second way and keeps the faster, which doubles
    compile time, the cost these tests are bounded by."""
    config = compiler_options_config({"xla_cpu_experimental_ynn_fusion_type": None})
    return tf.Session(graph=graph, config=config)


def initialize(sess, values):
    by_name = {v.op.name: v for v in tf.global_variables()}
    sess.run(tf.global_variables_initializer(),
             {by_name[name].initial_value: value for name, value in values.items()})


# --- parameter counts (graph building only) ----------------------------------------------

def cifar_resnet_params(depth, num_classes=10):
    """Section 4.2 of He et al. by hand: 3x3 stem, stages of n basic blocks with
    16/32/64 channels, zero-padding shortcuts (no parameters), BN gamma+beta per conv."""
    n = (depth - 2) // 6
    total = 3 * 3 * 3 * 16 + 2 * 16
    in_channels = 16
    for width in (16, 32, 64):
        for _ in range(n):
            total += 9 * in_channels * width + 9 * width * width + 4 * width
            in_channels = width
    return total + 64 * num_classes + num_classes


PUBLISHED = {
    # torchvision / the reference TF implementation, 224x224x3 inputs, 1000 classes.
    "resnet18": 11_689_512,
    "resnet34": 21_797_672,
    "resnet50": 25_557_032,
    "resnet101": 44_549_160,
    "resnet152": 60_192_808,
    "squeezenet1_1": 1_235_496,
    # He et al. 2016, table 6 (option A shortcuts), rounded there to 0.27M ... 1.7M.
    "resnet20": 269_722,
    "resnet32": 464_154,
    "resnet44": 658_586,
    "resnet56": 853_018,
    "resnet110": 1_727_962,
}


def test_cifar_hand_counts_round_to_the_papers_numbers():
    paper = {20: 0.27, 32: 0.46, 44: 0.66, 56: 0.85, 110: 1.7}
    for depth, millions in paper.items():
        count = cifar_resnet_params(depth)
        assert count == PUBLISHED[f"resnet{depth}"]
        assert round(count / 1e6, 2 if depth < 100 else 1) == millions


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_parameter_count_matches_published(name):
    spec = specs()[name]
    images = tf.placeholder(tf.float32, (None,) + spec.input_shape)
    logits = spec.build(images, spec.config, num_classes=spec.num_classes, training=False)
    assert logits.shape.as_list() == [None, spec.num_classes]
    assert trainable_count() == PUBLISHED[name]


def test_registered_specs():
    for name in ("resnet18", "resnet34", "resnet50", "resnet101", "resnet152"):
        spec = specs()[name]
        assert (spec.family, spec.kind, spec.input_shape, spec.num_classes) == (
            "resnet", "image_classifier", (224, 224, 3), 1000)
    for name in ("resnet20", "resnet32", "resnet44", "resnet56", "resnet110"):
        spec = specs()[name]
        assert (spec.input_shape, spec.num_classes) == ((32, 32, 3), 10)
    spec = specs()["squeezenet1_1"]
    assert (spec.family, spec.input_shape, spec.num_classes) == (
        "squeezenet", (224, 224, 3), 1000)
    config = specs()["resnet50"].config
    assert (config.bn_momentum, config.bn_epsilon, config.zero_init_last_bn_gamma,
            config.data_format) == (0.9, 1e-5, True, "channels_last")


def test_feature_maps_strides_8_16_32():
    images = tf.placeholder(tf.float32, [None, 224, 224, 3])
    maps = resnet.feature_maps(images, depth=50)
    assert sorted(maps) == ["C3", "C4", "C5"]
    assert maps["C3"].shape.as_list() == [None, 28, 28, 512]
    assert maps["C4"].shape.as_list() == [None, 14, 14, 1024]
    assert maps["C5"].shape.as_list() == [None, 7, 7, 2048]
    small = resnet.feature_maps(tf.placeholder(tf.float32, [1, 64, 64, 3]), depth=18)
    assert [small[k].shape.as_list() for k in ("C3", "C4", "C5")] == [
        [1, 8, 8, 128], [1, 4, 4, 256], [1, 2, 2, 512]]


def test_bottleneck_downsamples_in_the_3x3_conv():
    resnet.feature_maps(tf.placeholder(tf.float32, [1, 64, 64, 3]), depth=50)
    graph = tf.get_default_graph()
    block = "resnet50/stage2/block1/"
    conv1 = graph.get_tensor_by_name(block + "conv1/Conv2D:0")
    conv2 = graph.get_tensor_by_name(block + "conv2/Conv2D:0")
    # Stage 2 gets 16x16 maps: v1.5 keeps them in the 1x1 conv, halves them in the 3x3.
    assert conv1.shape.as_list() == [1, 16, 16, 128]
    assert conv2.shape.as_list() == [1, 8, 8, 128]


def test_update_ops_hold_every_moving_statistic():
    images = tf.placeholder(tf.float32, [2, 32, 32, 3])
    spec = specs()["resnet20"]
    spec.build(images, spec.config, num_classes=10, training=True)
    updated = {op.op.inputs[0].op.name for op in tf.get_collection(tf.GraphKeys.UPDATE_OPS)}
    moving = {v.op.name for v in tf.global_variables() if "moving_" in v.op.name}
    # resnet20: a stem BN and 2 BNs in each of 9 blocks, each with a mean and variance.
    assert len(moving) == 2 * 19
    assert updated == moving


def test_inference_graph_adds_no_update_ops():
    images = tf.placeholder(tf.float32, [2, 32, 32, 3])
    spec = specs()["resnet20"]
    spec.build(images, spec.config, num_classes=10, training=False)
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []


def test_zero_init_is_configurable():
    images = tf.placeholder(tf.float32, [1, 32, 32, 3])
    config = resnet.cifar_config(20, zero_init_last_bn_gamma=False)
    resnet.resnet(images, config, num_classes=10)
    gammas = [v for v in tf.global_variables() if v.op.name.endswith("gamma")]
    with session() as sess:
        sess.run([v.initializer for v in gammas])
        values = sess.run(gammas)
    assert all(np.all(value == 1.0) for value in values)


# --- ResNet-20: forward at init, training steps, BN updates (one graph) ------------------

LEARNING_RATE = 0.05
STEPS = 5


@pytest.fixture(scope="module")
def resnet20_run():
    rng = np.random.RandomState(0)
    images = rng.standard_normal((2, 32, 32, 3)).astype(np.float32)
    labels = np.array([3, 7], np.int32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [2, 32, 32, 3])
        y = tf.placeholder(tf.int32, [2])
        out = resnet.model_fn(x, y, "train",
                              {"model": "resnet20", "learning_rate": LEARNING_RATE})
        gammas = {v.op.name: v for v in tf.global_variables() if v.op.name.endswith("gamma")}
        stem_mean = graph.get_tensor_by_name("resnet20/stem/bn1/moving_mean:0")
        kernels = fed_kernels(rng)
        fetches = {"logits": out.predictions["logits"], "loss": out.loss, "gammas": gammas,
                   "stem_moving_mean": stem_mean, "train": out.train_op}
        with session(graph) as sess:
            initialize(sess, kernels)
            # Each run fetches the values from before its own update.
            steps = [sess.run(fetches, {x: images, y: labels}) for _ in range(STEPS)]
    return {"images": images, "labels": labels, "kernels": kernels, "steps": steps}


def resnet20_logits_at_init(images, kernels):
    """With gamma = 0 in every block's last BN each block passes its shortcut through:
    the identity, or (stages 2 and 3) a stride-2 subsample padded with zero channels,
    16 -> 32 -> 64 with the old channels in the middle. Batch statistics (training)."""
    z = np_conv(images, kernels["resnet20/stem/conv1/kernel"], pad=(1, 1))
    mean, var = z.mean(axis=(0, 1, 2)), z.var(axis=(0, 1, 2))
    h = relu((z - mean) / np.sqrt(var + BN_EPSILON))[:, ::4, ::4, :]
    pooled = np.zeros((len(images), 64))
    pooled[:, 24:40] = h.mean(axis=(1, 2))
    return pooled @ kernels["resnet20/logits/kernel"], z


def test_resnet20_forward_matches_numpy(resnet20_run):
    first = resnet20_run["steps"][0]
    assert first["logits"].shape == (2, 10)
    expected, _ = resnet20_logits_at_init(resnet20_run["images"], resnet20_run["kernels"])
    np.testing.assert_allclose(first["logits"], expected, rtol=1e-3, atol=1e-5)


def test_resnet20_loss_is_cross_entropy_plus_weight_decay(resnet20_run):
    run = resnet20_run
    logits, _ = resnet20_logits_at_init(run["images"], run["kernels"])
    decay = 1e-4 * sum(0.5 * np.sum(k.astype(np.float64) ** 2)
                       for k in run["kernels"].values())
    expected = softmax_cross_entropy(logits, run["labels"]) + decay
    np.testing.assert_allclose(run["steps"][0]["loss"], expected, rtol=1e-4)


def test_resnet20_training_reduces_the_loss(resnet20_run):
    losses = [step["loss"] for step in resnet20_run["steps"]]
    assert losses[-1] < 0.8 * losses[0], losses


def test_resnet20_last_bn_gamma_of_each_block_starts_at_zero(resnet20_run):
    gammas = resnet20_run["steps"][0]["gammas"]
    zero = {name for name, value in gammas.items() if np.all(value == 0.0)}
    one = {name for name, value in gammas.items() if np.all(value == 1.0)}
    expected_zero = {f"resnet20/stage{s}/block{b}/bn2/gamma"
                     for s in (1, 2, 3) for b in (1, 2, 3)}
    assert zero == expected_zero
    assert one == set(gammas) - expected_zero and len(one) == 10


def test_resnet20_train_op_updates_moving_statistics(resnet20_run):
    _, z = resnet20_logits_at_init(resnet20_run["images"], resnet20_run["kernels"])
    steps = resnet20_run["steps"]
    np.testing.assert_array_equal(steps[0]["stem_moving_mean"], np.zeros(16))
    # moving = momentum * moving + (1 - momentum) * batch mean, momentum 0.9.
    np.testing.assert_allclose(steps[1]["stem_moving_mean"], 0.1 * z.mean(axis=(0, 1, 2)),
                               rtol=1e-3, atol=1e-6)


# --- ResNet-50 (bottleneck, ImageNet stem): inference forward ----------------------------

def test_resnet50_forward_matches_numpy():
    """Inference at init: BN uses moving statistics (0, 1), so a BN is a division by
    sqrt(1 + eps); every block's residual branch is zero, so a block is its shortcut:
    the identity, or relu(BN(1x1 projection)) where the shape changes."""
    rng = np.random.RandomState(1)
    images = rng.standard_normal((1, 64, 64, 3)).astype(np.float32)
    x = tf.placeholder(tf.float32, [1, 64, 64, 3])
    spec = specs()["resnet50"]
    logits = spec.build(x, spec.config, num_classes=1000, training=False)
    kernels = fed_kernels(rng)
    with session() as sess:
        initialize(sess, kernels)
        got = sess.run(logits, {x: images})
    assert got.shape == (1, 1000)

    scale = 1.0 / np.sqrt(1.0 + BN_EPSILON)
    h = relu(np_conv(images, kernels["resnet50/stem/conv1/kernel"], 2, (3, 3)) * scale)
    assert h.shape == (1, 32, 32, 64)
    h = np_max_pool(h, 3, 2, pad=(0, 1))  # TF's "same" for an even size pads after
    for stage in (1, 2, 3, 4):
        w = kernels[f"resnet50/stage{stage}/block1/shortcut/conv/kernel"]
        stride = 1 if stage == 1 else 2
        h = relu(np_conv(h, w, stride) * scale)
    assert h.shape == (1, 2, 2, 2048)
    expected = h.mean(axis=(1, 2)) @ kernels["resnet50/logits/kernel"]
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-6)


# --- SqueezeNet 1.1: forward and training steps (one graph) ------------------------------

@pytest.fixture(scope="module")
def squeezenet_run():
    rng = np.random.RandomState(2)
    images = rng.standard_normal((2, 64, 64, 3)).astype(np.float32)
    labels = np.array([1, 4], np.int32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [2, 64, 64, 3])
        y = tf.placeholder(tf.int32, [2])
        # No dropout, so the step's logits are deterministic and NumPy can match them.
        config = squeezenet.SqueezeNetConfig(dropout_rate=0.0)
        logits = squeezenet.squeezenet(x, config, num_classes=10, training=True)
        loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
        train = tf.train.MomentumOptimizer(0.01, 0.9).minimize(loss)
        kernels = fed_kernels(rng)
        with session(graph) as sess:
            initialize(sess, kernels)
            steps = [sess.run({"logits": logits, "loss": loss, "train": train},
                              {x: images, y: labels}) for _ in range(STEPS)]
    return {"images": images, "kernels": kernels, "steps": steps}


def squeezenet_logits_at_init(images, kernels):
    """Biases start at zero. Fire: squeeze 1x1, then [expand 1x1, expand 3x3 'same']."""
    def fire(h, name):
        s = relu(np_conv(h, kernels[f"squeezenet1_1/{name}/squeeze/kernel"]))
        e1 = relu(np_conv(s, kernels[f"squeezenet1_1/{name}/expand1x1/kernel"]))
        e3 = relu(np_conv(s, kernels[f"squeezenet1_1/{name}/expand3x3/kernel"], pad=(1, 1)))
        return np.concatenate([e1, e3], axis=-1)

    h = relu(np_conv(images, kernels["squeezenet1_1/conv1/kernel"], stride=2))
    h = np_max_pool(h, 3, 2)
    h = np_max_pool(fire(fire(h, "fire2"), "fire3"), 3, 2)
    h = np_max_pool(fire(fire(h, "fire4"), "fire5"), 3, 2)
    for name in ("fire6", "fire7", "fire8", "fire9"):
        h = fire(h, name)
    assert h.shape == (2, 3, 3, 512)  # 64 -> 31 -> 15 -> 7 -> 3
    h = relu(np_conv(h, kernels["squeezenet1_1/classifier/kernel"]))
    return h.mean(axis=(1, 2))


def test_squeezenet_forward_matches_numpy(squeezenet_run):
    got = squeezenet_run["steps"][0]["logits"]
    assert got.shape == (2, 10)
    expected = squeezenet_logits_at_init(squeezenet_run["images"], squeezenet_run["kernels"])
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-6)


def test_squeezenet_training_reduces_the_loss(squeezenet_run):
    losses = [step["loss"] for step in squeezenet_run["steps"]]
    assert losses[-1] < losses[0], losses


def test_model_fn_modes():
    images = tf.placeholder(tf.float32, [2, 32, 32, 3])
    labels = tf.placeholder(tf.int32, [2])
    infer = resnet.model_fn(images, None, "infer", {"model": "resnet20"})
    assert sorted(infer.predictions) == ["classes", "logits", "probabilities"]
    assert infer.loss is None and infer.train_op is None
    evaluate = resnet.model_fn(images, labels, "eval", {"model": "resnet20"})
    assert evaluate.train_op is None and evaluate.loss.shape.as_list() == []
    assert set(evaluate.eval_metric_ops) == {"accuracy", "top_5_accuracy"}
    with pytest.raises(ValueError, match="needs labels"):
        resnet.model_fn(images, None, "train", {"model": "resnet20"})
    with pytest.raises(ValueError):
        resnet.model_fn(images, labels, "predict", {"model": "resnet20"})


def test_channels_first_has_the_same_parameters():
    images = tf.placeholder(tf.float32, [None, 224, 224, 3])
    config = resnet.imagenet_config(50, data_format="channels_first")
    logits = resnet.resnet(images, config, num_classes=1000)
    assert logits.shape.as_list() == [None, 1000]
    assert trainable_count() == PUBLISHED["resnet50"]
    maps = resnet.feature_maps(images, config=config)
    assert maps["C5"].shape.as_list() == [None, 2048, 7, 7]


def test_cifar_projection_shortcuts_add_two_1x1_convs_and_bns():
    images = tf.placeholder(tf.float32, [None, 32, 32, 3])
    config = resnet.cifar_config(20, cifar_shortcut="projection")
    resnet.resnet(images, config, num_classes=10)
    # Option B: 1x1 16->32 and 32->64 projections, each followed by a BN (gamma, beta).
    extra = 16 * 32 + 2 * 32 + 32 * 64 + 2 * 64
    assert trainable_count() == cifar_resnet_params(20) + extra == 272_474
