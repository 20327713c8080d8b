"""tf.contrib.layers / framework / slim: names, defaults and values against NumPy."""

import math

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.contrib import framework, layers


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def _names(variables):
    return [v.name for v in variables]


# -- modules ------------------------------------------------------------------------------------
def test_contrib_modules_are_reachable():
    import tensorflux.contrib.slim as slim
    assert tf.contrib.layers is layers
    assert tf.contrib.framework is framework
    assert slim.conv2d is layers.conv2d and slim.arg_scope is framework.arg_scope
    for name in ("fully_connected", "max_pool2d", "flatten", "batch_norm", "l2_regularizer",
                 "dropout", "get_model_variables"):
        assert hasattr(slim, name)


def test_unknown_contrib_module_says_it_is_not_provided():
    with pytest.raises(AttributeError, match=r"tf\.contrib\.learn is not provided by "
                                             r"tensorflux"):
        tf.contrib.learn  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        tf.no_such_name  # noqa: B018


# -- fully_connected ----------------------------------------------------------------------------
def test_fully_connected_variables_and_values():
    x = tf.placeholder(tf.float32, [None, 3])
    y = layers.fully_connected(x, 4, biases_initializer=tf.constant_initializer(0.25))
    y2 = layers.fully_connected(y, 2, weights_initializer=tf.zeros_initializer())
    assert _names(tf.trainable_variables()) == [
        "fully_connected/weights:0", "fully_connected/biases:0",
        "fully_connected_1/weights:0", "fully_connected_1/biases:0"]
    assert tf.trainable_variables()[0].shape.as_list() == [3, 4]
    assert tf.trainable_variables()[1].shape.as_list() == [4]
    assert _names(tf.get_collection(tf.GraphKeys.MODEL_VARIABLES)) == \
        _names(tf.trainable_variables())
    assert y.shape.as_list() == [None, 4] and y2.shape.as_list() == [None, 2]

    xv = np.random.RandomState(0).randn(5, 3).astype(np.float32)
    w, b, out = _run([tf.trainable_variables()[0], tf.trainable_variables()[1], y], {x: xv})
    np.testing.assert_allclose(b, np.full(4, 0.25))
    np.testing.assert_allclose(out, np.maximum(xv @ w + b, 0.0), rtol=1e-5, atol=1e-6)


def test_fully_connected_reuse_and_rank3():
    x = tf.placeholder(tf.float32, [2, 5, 3])
    w = np.random.RandomState(1).randn(3, 4).astype(np.float32)
    a = layers.fully_connected(x, 4, activation_fn=None, scope="fc",
                               weights_initializer=tf.constant_initializer(w))
    b = layers.fully_connected(x, 4, activation_fn=None, scope="fc", reuse=True)
    assert len(tf.trainable_variables()) == 2
    assert a.shape.as_list() == [2, 5, 4]
    xv = np.random.RandomState(1).randn(2, 5, 3).astype(np.float32)
    av, bv = _run([a, b], {x: xv})
    np.testing.assert_allclose(av, xv @ w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bv, av)


# -- conv2d and pooling -----------------------------------------------------------------------
def _np_conv_same(x, w, stride):
    """(N, H, W, C) * (KH, KW, C, F) with TF's SAME padding."""
    n, h, wd, _ = x.shape
    kh, kw, _, f = w.shape
    oh, ow = math.ceil(h / stride), math.ceil(wd / stride)
    ph = max((oh - 1) * stride + kh - h, 0)
    pw = max((ow - 1) * stride + kw - wd, 0)
    xp = np.pad(x, [(0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)])
    out = np.zeros((n, oh, ow, f))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return out


def test_conv2d_variables_and_values():
    x = tf.placeholder(tf.float32, [2, 5, 5, 2])
    y = layers.conv2d(x, 3, [3, 3], biases_initializer=tf.constant_initializer(-0.1))
    w2 = np.random.RandomState(7).randn(2, 2, 3, 4).astype(np.float32)
    y2 = layers.conv2d(y, 4, 2, stride=2, weights_initializer=tf.constant_initializer(w2))
    assert _names(tf.trainable_variables()) == [
        "Conv/weights:0", "Conv/biases:0", "Conv_1/weights:0", "Conv_1/biases:0"]
    assert tf.trainable_variables()[0].shape.as_list() == [3, 3, 2, 3]
    assert tf.trainable_variables()[2].shape.as_list() == [2, 2, 3, 4]
    assert y.shape.as_list() == [2, 5, 5, 3] and y2.shape.as_list() == [2, 3, 3, 4]

    xv = np.random.RandomState(2).randn(2, 5, 5, 2).astype(np.float32)
    w, out, out2 = _run([tf.trainable_variables()[0], y, y2], {x: xv})
    expected = np.maximum(_np_conv_same(xv, w, 1) - 0.1, 0.0)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out2, np.maximum(_np_conv_same(out, w2, 2), 0.0),
                               rtol=1e-4, atol=1e-5)


def test_conv2d_with_normalizer_has_no_biases():
    x = tf.placeholder(tf.float32, [4, 6, 6, 2])
    layers.conv2d(x, 3, 3, rate=2, normalizer_fn=layers.batch_norm,
                  normalizer_params={"scale": True},
                  weights_regularizer=layers.l2_regularizer(0.5))
    assert _names(tf.global_variables()) == [
        "Conv/weights:0", "Conv/BatchNorm/beta:0", "Conv/BatchNorm/gamma:0",
        "Conv/BatchNorm/moving_mean:0", "Conv/BatchNorm/moving_variance:0"]
    assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 1


def test_conv2d_transpose_embed_and_outputs_collections():
    x = tf.placeholder(tf.float32, [None, 4, 4, 3])
    same = layers.conv2d_transpose(x, 2, [3, 3], stride=2, outputs_collections="acts")
    valid = layers.conv2d_transpose(x, 2, 3, stride=2, padding="VALID", scope="up")
    assert same.shape.as_list() == [None, 8, 8, 2]
    assert valid.shape.as_list() == [None, 9, 9, 2]  # 4 * 2 + max(3 - 2, 0)
    assert tf.global_variables()[0].name == "Conv2d_transpose/weights:0"
    assert tf.global_variables()[0].shape.as_list() == [3, 3, 2, 3]
    assert tf.get_collection("acts") == [same] and same.alias == "Conv2d_transpose"
    e = layers.embed_sequence(tf.constant([[1, 2]]), vocab_size=5, embed_dim=4)
    assert e.shape.as_list() == [1, 2, 4]
    assert tf.global_variables()[-1].name == "EmbedSequence/embeddings:0"


def test_pooling_defaults_are_stride_2_valid():
    x = tf.constant(np.arange(25, dtype=np.float32).reshape(1, 5, 5, 1))
    m = layers.max_pool2d(x, 3)
    a = layers.avg_pool2d(x, [2, 2])
    assert m.shape.as_list() == [1, 2, 2, 1] and a.shape.as_list() == [1, 2, 2, 1]
    assert m.op.name.startswith("MaxPool2D/")
    mv, av = _run([m, a])
    img = np.arange(25, dtype=np.float32).reshape(5, 5)
    np.testing.assert_allclose(mv[0, :, :, 0], [[img[0:3, 0:3].max(), img[0:3, 2:5].max()],
                                                [img[2:5, 0:3].max(), img[2:5, 2:5].max()]])
    np.testing.assert_allclose(av[0, :, :, 0], [[img[0:2, 0:2].mean(), img[0:2, 2:4].mean()],
                                                [img[2:4, 0:2].mean(), img[2:4, 2:4].mean()]])


def test_flatten_dropout_one_hot():
    x = tf.placeholder(tf.float32, [None, 2, 3])
    flat = layers.flatten(x)
    assert flat.shape.as_list() == [None, 6]
    xv = np.ones((4, 2, 3), np.float32)
    dropped = layers.dropout(flat, keep_prob=0.5)
    kept = layers.dropout(flat, is_training=False)
    hot = layers.one_hot_encoding([0, 2], 3)
    fv, dv, kv, hv = _run([flat, dropped, kept, hot], {x: xv})
    np.testing.assert_allclose(fv, np.ones((4, 6)))
    assert set(np.unique(dv)) <= {0.0, 2.0}
    np.testing.assert_allclose(kv, fv)
    np.testing.assert_allclose(hv, [[1, 0, 0], [0, 0, 1]])


# -- batch_norm ---------------------------------------------------------------------------------
def _moments(xv, axes):
    return xv.mean(axis=axes), xv.var(axis=axes)


@pytest.mark.parametrize("fused", [None, False])
def test_batch_norm_defaults_and_update_ops(fused):
    x = tf.placeholder(tf.float32, [6, 2, 2, 3])
    y = layers.batch_norm(x, fused=fused)
    assert _names(tf.global_variables()) == [
        "BatchNorm/beta:0", "BatchNorm/moving_mean:0", "BatchNorm/moving_variance:0"]
    assert _names(tf.trainable_variables()) == ["BatchNorm/beta:0"]
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    mm, mv = tf.global_variables()[1:]

    xv = np.random.RandomState(3).randn(6, 2, 2, 3).astype(np.float32) * 2 + 1
    mean, var = _moments(xv, (0, 1, 2))
    n = 6 * 2 * 2
    # Fused batch norm moves towards the Bessel-corrected variance (TF's fused kernel).
    var_for_update = var * n / (n - 1) if fused is None else var
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = sess.run(y, {x: xv})
        np.testing.assert_allclose(out, (xv - mean) / np.sqrt(var + 0.001), rtol=1e-4,
                                   atol=1e-4)
        np.testing.assert_allclose(sess.run(mm), np.zeros(3))  # no update without UPDATE_OPS
        sess.run(updates, {x: xv})
        np.testing.assert_allclose(sess.run(mm), 0.001 * mean, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(sess.run(mv), 0.999 + 0.001 * var_for_update, rtol=1e-5)


def test_batch_norm_in_place_updates_and_inference():
    x = tf.placeholder(tf.float32, [8, 3])
    y = layers.batch_norm(x, updates_collections=None, scale=True, decay=0.5)
    y_eval = layers.batch_norm(x, updates_collections=None, scale=True, is_training=False,
                               scope="BatchNorm", reuse=True)
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    assert "BatchNorm/gamma:0" in _names(tf.trainable_variables())
    xv = np.random.RandomState(4).randn(8, 3).astype(np.float32) + 3
    mean, var = _moments(xv, 0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(y, {x: xv})  # updates as a side effect of computing the output
        mm = sess.run(tf.global_variables()[2])
        np.testing.assert_allclose(mm, 0.5 * mean, rtol=1e-5)
        mv = sess.run(tf.global_variables()[3])
        np.testing.assert_allclose(mv, 0.5 + 0.5 * var * 8 / 7, rtol=1e-5)
        out = sess.run(y_eval, {x: xv})
        np.testing.assert_allclose(out, (xv - mm) / np.sqrt(mv + 0.001), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(sess.run(tf.global_variables()[2]), mm)  # unchanged


def test_batch_norm_training_flag_tensor():
    x = tf.placeholder(tf.float32, [4, 2])
    training = tf.placeholder(tf.bool, [])
    y = layers.batch_norm(x, is_training=training, updates_collections=None)
    xv = np.array([[1, 2], [3, 4], [5, 6], [7, 9]], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = sess.run(y, {x: xv, training: False})  # moving stats 0 / 1: ~identity
        np.testing.assert_allclose(out, xv / np.sqrt(1.001), rtol=1e-5)
        np.testing.assert_allclose(sess.run(tf.global_variables()[1]), [0, 0])
        sess.run(y, {x: xv, training: True})
        np.testing.assert_allclose(sess.run(tf.global_variables()[1]), 0.001 * xv.mean(0),
                                   rtol=1e-4)


def test_layer_norm():
    x = tf.placeholder(tf.float32, [3, 4])
    y = layers.layer_norm(x)
    assert _names(tf.trainable_variables()) == ["LayerNorm/beta:0", "LayerNorm/gamma:0"]
    xv = np.random.RandomState(5).randn(3, 4).astype(np.float32)
    mean, var = xv.mean(1, keepdims=True), xv.var(1, keepdims=True)
    np.testing.assert_allclose(_run(y, {x: xv}), (xv - mean) / np.sqrt(var + 1e-12),
                               rtol=1e-4, atol=1e-5)


# -- arg_scope ----------------------------------------------------------------------------------
def test_arg_scope_overrides_defaults_and_nests():
    x = tf.constant([[1.0, -2.0]])
    fc, conv = layers.fully_connected, layers.conv2d
    with framework.arg_scope([fc, conv], activation_fn=None,
                             weights_initializer=tf.ones_initializer()):
        with framework.arg_scope([fc], biases_initializer=tf.constant_initializer(0.5)):
            a = fc(x, 1)                                  # both scopes apply
            b = fc(x, 1, activation_fn=tf.nn.relu)        # the call wins
        c = fc(x, 1)                                      # inner scope gone
    d = fc(x, 1, weights_initializer=tf.ones_initializer())  # defaults back: relu
    av, bv, cv, dv = _run([a, b, c, d])
    np.testing.assert_allclose(av, [[-0.5]])
    np.testing.assert_allclose(bv, [[0.0]])
    np.testing.assert_allclose(cv, [[-1.0]])
    np.testing.assert_allclose(dv, [[0.0]])

    with framework.arg_scope([conv], padding="VALID", stride=2) as scope:
        pass
    with framework.arg_scope(scope):  # a scope dict can be re-entered
        out = conv(tf.zeros([1, 7, 7, 1]), 2, [3, 3])
    assert out.shape.as_list() == [1, 3, 3, 2]
    with pytest.raises(ValueError, match="not decorated with @add_arg_scope"):
        with framework.arg_scope([tf.nn.relu], name="x"):
            pass


def test_repeat_and_stack_scopes():
    x = tf.zeros([1, 4, 4, 1])
    layers.repeat(x, 2, layers.conv2d, 2, [3, 3], scope="conv1")
    layers.stack(tf.zeros([1, 3]), layers.fully_connected, [4, 5], scope="fc")
    assert _names(tf.get_collection(tf.GraphKeys.MODEL_VARIABLES, "conv1")) == [
        "conv1/conv1_1/weights:0", "conv1/conv1_1/biases:0",
        "conv1/conv1_2/weights:0", "conv1/conv1_2/biases:0"]
    assert framework.get_variables("fc/fc_2", suffix="weights")[0].shape.as_list() == [4, 5]


# -- initializers and regularizers ---------------------------------------------------------
def test_xavier_and_variance_scaling_statistics():
    # Each random op costs one XLA compile, so two samples cover the two distributions:
    # xavier (uniform, FAN_AVG) and the default (truncated normal, FAN_IN of a conv kernel).
    tf.set_random_seed(0)
    shapes = {"xu": [300, 500], "he": [3, 3, 64, 96]}
    inits = {"xu": layers.xavier_initializer(), "he": layers.variance_scaling_initializer()}
    vars_ = {k: tf.get_variable(k, shapes[k], initializer=inits[k]) for k in shapes}
    vals = _run(vars_)
    limit = math.sqrt(6.0 / (300 + 500))  # xavier uniform: sqrt(3 / ((in + out) / 2))
    assert np.abs(vals["xu"]).max() <= limit
    assert abs(vals["xu"].std() - limit / math.sqrt(3)) < 0.02 * limit
    # contrib's normal is truncated at 2 stddev with stddev sqrt(1.3 * factor / n), so the
    # samples' std is 0.8796 * stddev (close to sqrt(factor / n)); He: factor 2 and n =
    # fan_in including the kernel's spatial size.
    std = math.sqrt(1.3 * 2.0 / (3 * 3 * 64))
    assert np.abs(vals["he"]).max() <= 2 * std + 1e-6
    assert abs(vals["he"].std() - 0.87962566 * std) < 0.02 * std
    with pytest.raises(TypeError):
        layers.variance_scaling_initializer(mode="FAN_SUM")
    with pytest.raises(TypeError, match="non-floating"):
        layers.xavier_initializer(dtype=tf.int32)


def test_l2_regularizer_value():
    w = tf.constant([[1.0, -2.0], [3.0, 0.5]])
    reg = layers.l2_regularizer(0.1)(w)
    both = layers.l1_l2_regularizer(0.2, 0.1)(w)
    wv = np.array([[1.0, -2.0], [3.0, 0.5]])
    rv, bv = _run([reg, both])
    np.testing.assert_allclose(rv, 0.1 * (wv ** 2).sum() / 2, rtol=1e-6)
    np.testing.assert_allclose(bv, 0.2 * np.abs(wv).sum() + 0.1 * (wv ** 2).sum() / 2,
                               rtol=1e-6)


# -- optimize_loss ------------------------------------------------------------------------------
def test_optimize_loss_reduces_a_quadratic():
    w = tf.Variable([0.0, 0.0])
    loss = tf.reduce_sum(tf.square(w - [3.0, -1.0]))
    step = framework.get_or_create_global_step()
    train = layers.optimize_loss(loss, step, learning_rate=0.1, optimizer="Adam")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run(train) for _ in range(60)]
        assert sess.run(step) == 60
    assert losses[0] == pytest.approx(10.0)  # the loss before the first update
    assert losses[-1] < 0.5 * losses[0]
    assert "OptimizeLoss/learning_rate:0" in _names(tf.global_variables())
    with pytest.raises(ValueError, match="Optimizer name should be one of"):
        layers.optimize_loss(loss, step, 0.1, "Sgd")


def test_optimize_loss_clips_by_global_norm_sgd():
    w = tf.Variable([10.0, 10.0])
    loss = tf.reduce_sum(tf.square(w))  # gradient 2w = (20, 20), norm 20 * sqrt(2)
    train = layers.optimize_loss(loss, None, learning_rate=0.1, optimizer="SGD",
                                 clip_gradients=1.0, summaries=["loss"])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        # the clipped gradient is (20, 20) / (20 sqrt 2) = (1/sqrt 2, 1/sqrt 2)
        np.testing.assert_allclose(sess.run(w), 10.0 - 0.1 / math.sqrt(2.0), rtol=1e-6)


def test_optimize_loss_gradient_multipliers_and_optimizer_instance():
    w = tf.Variable([1.0, 1.0])
    v = tf.Variable(1.0)
    loss = tf.reduce_sum(w) + v
    train = layers.optimize_loss(loss, None, learning_rate=None,
                                 optimizer=tf.train.GradientDescentOptimizer(0.5),
                                 gradient_multipliers={v: 3.0}, summaries=[])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        np.testing.assert_allclose(sess.run(w), [0.5, 0.5])
        np.testing.assert_allclose(sess.run(v), 1.0 - 1.5)


# -- framework ----------------------------------------------------------------------------------
def test_model_variables_and_variables_to_restore():
    with tf.variable_scope("net"):
        a = framework.model_variable("a", [2], initializer=tf.zeros_initializer())
        b = framework.variable("b", [], initializer=tf.zeros_initializer())
    with tf.variable_scope("head"):
        c = framework.model_variable("c", [1], trainable=False)
    step = framework.get_or_create_global_step()
    assert framework.get_global_step() is step
    assert framework.get_model_variables() == [a, c]
    assert framework.get_model_variables("net") == [a]
    assert b not in tf.get_collection(tf.GraphKeys.MODEL_VARIABLES)
    assert c not in tf.trainable_variables()
    assert framework.get_variables_to_restore(exclude=["head", "global_step"]) == [a, b]
    assert framework.get_variables_to_restore(include=["head"]) == [c]
    assert framework.get_unique_variable("net/b") is b
    assert framework.get_variables_by_name("a") == [a]
