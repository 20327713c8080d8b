"""tf.layers.batch_normalization: variables, UPDATE_OPS, training flags, values vs NumPy."""

import numpy as np
import pytest

import tensorflux as tf

EPS = 1e-3  # tf.layers' default epsilon
MOMENTUM = 0.99


def _np_bn(x, mean, var, gamma=1.0, beta=0.0, eps=EPS):
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def test_variables_collections_and_names():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.layers.batch_normalization(x, training=True)
    tf.layers.batch_normalization(x)
    tf.layers.batch_normalization(x, training=tf.constant(False))  # known now: no updates
    names = [v.name for v in tf.global_variables()]
    assert names[:4] == ["batch_normalization/gamma:0", "batch_normalization/beta:0",
                         "batch_normalization/moving_mean:0",
                         "batch_normalization/moving_variance:0"]
    assert names[4] == "batch_normalization_1/gamma:0"
    assert [v.name for v in tf.trainable_variables()][:4] == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0",
        "batch_normalization_1/gamma:0", "batch_normalization_1/beta:0"]
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    # Only the training=True layer makes update ops (Python False builds none).
    assert [u.op.name for u in updates] == ["batch_normalization/AssignMovingAvg",
                                            "batch_normalization/AssignMovingAvg_1"]
    assert y.shape.as_list() == [None, 3]


def test_moving_statistics_change_only_when_update_ops_run():
    rng = np.random.default_rng(0)
    xv = rng.normal(2.0, 3.0, size=(16, 4)).astype(np.float32)
    x = tf.placeholder(tf.float32, [16, 4])
    layer = tf.layers.BatchNormalization()
    y = layer(x, training=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = sess.run(y, {x: xv})
        for _ in range(2):  # running the output alone leaves the averages alone
            sess.run(y, {x: xv})
        mm, mv = sess.run([layer.moving_mean, layer.moving_variance])
        np.testing.assert_array_equal(mm, np.zeros(4))
        np.testing.assert_array_equal(mv, np.ones(4))
        for _ in range(3):
            sess.run(layer.updates, {x: xv})
        mm, mv = sess.run([layer.moving_mean, layer.moving_variance])
    mean, var = xv.mean(0), xv.var(0)  # non-fused: the biased batch variance
    np.testing.assert_allclose(out, _np_bn(xv, mean, var), rtol=1e-4, atol=1e-5)
    decay = MOMENTUM ** 3
    np.testing.assert_allclose(mm, (1 - decay) * mean, rtol=1e-5)
    np.testing.assert_allclose(mv, decay * 1.0 + (1 - decay) * var, rtol=1e-5)


def test_training_flag_as_tensor():
    rng = np.random.default_rng(1)
    xv = rng.normal(1.0, 2.0, size=(8, 3)).astype(np.float32)
    x = tf.constant(xv)
    training = tf.placeholder(tf.bool, [])
    layer = tf.layers.BatchNormalization(gamma_initializer=tf.constant_initializer(2.0),
                                         beta_initializer=tf.constant_initializer(0.5),
                                         moving_mean_initializer=tf.constant_initializer(1.0))
    y = layer(x, training=training)
    update = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(update) == 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        infer, _ = sess.run([y, update], {training: False})
        stats_after_infer = sess.run([layer.moving_mean, layer.moving_variance])
        train, _ = sess.run([y, update], {training: True})
        stats_after_train = sess.run([layer.moving_mean, layer.moving_variance])
    np.testing.assert_allclose(infer, _np_bn(xv, 1.0, 1.0, 2.0, 0.5), rtol=1e-5)
    # Running the updates in inference mode leaves the moving statistics unchanged.
    np.testing.assert_allclose(stats_after_infer[0], np.ones(3))
    np.testing.assert_allclose(stats_after_infer[1], np.ones(3))
    np.testing.assert_allclose(train, _np_bn(xv, xv.mean(0), xv.var(0), 2.0, 0.5),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(stats_after_train[0], 0.99 + 0.01 * xv.mean(0), rtol=1e-5)
    np.testing.assert_allclose(stats_after_train[1], 0.99 + 0.01 * xv.var(0), rtol=1e-5)


def test_inference_uses_moving_statistics():
    xv = np.array([[1.0, 2.0], [3.0, 6.0]], np.float32)
    y = tf.layers.batch_normalization(
        tf.constant(xv), moving_mean_initializer=tf.constant_initializer(1.0),
        moving_variance_initializer=tf.constant_initializer(4.0), epsilon=0.01)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(y)
    np.testing.assert_allclose(got, (xv - 1.0) / np.sqrt(4.01), rtol=1e-6)


def test_update_ops_as_control_dependencies_of_a_train_op():
    rng = np.random.default_rng(2)
    xv = rng.normal(size=(10, 3)).astype(np.float32)
    x = tf.constant(xv)
    h = tf.layers.batch_normalization(x, training=True, momentum=0.9)
    loss = tf.reduce_mean(tf.square(tf.layers.dense(h, 1)))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    mean_var = [v for v in tf.global_variables() if "moving_mean" in v.name][0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(5):
            sess.run(train_op)
        got = sess.run(mean_var)
    # The input does not change, so after n updates: (1 - 0.9 ** n) * batch mean.
    np.testing.assert_allclose(got, (1 - 0.9 ** 5) * xv.mean(0), rtol=1e-5, atol=1e-7)


def test_channels_first_axis_center_scale_and_regularizers():
    rng = np.random.default_rng(3)
    xv = rng.normal(size=(4, 3, 5)).astype(np.float32)  # channels on axis 1
    layer = tf.layers.BatchNormalization(
        axis=1, center=False, beta_regularizer=tf.regularizers.l2_regularizer(1.0),
        gamma_regularizer=tf.regularizers.l2_regularizer(0.5))
    y = layer(tf.constant(xv), training=True)
    assert [v.name for v in layer.variables] == [
        "batch_normalization/gamma:0", "batch_normalization/moving_mean:0",
        "batch_normalization/moving_variance:0"]
    reg = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert [r.name for r in reg] == ["batch_normalization/gamma/Regularizer/l2_regularizer:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, reg_value = sess.run([y, reg[0]])
    mean = xv.mean((0, 2), keepdims=True)
    var = xv.var((0, 2), keepdims=True)
    np.testing.assert_allclose(got, _np_bn(xv, mean, var), rtol=1e-4, atol=1e-5)
    assert reg_value == pytest.approx(0.5 * 3 / 2)


def test_reuse_and_errors():
    x = tf.placeholder(tf.float32, [None, 2])
    tf.layers.batch_normalization(x, name="bn")
    tf.layers.batch_normalization(x, name="bn", reuse=True)
    assert len(tf.global_variables()) == 4
    with pytest.raises(ValueError, match="Invalid axis"):
        tf.layers.batch_normalization(x, axis=3)
    with pytest.raises(ValueError, match="Input has undefined `axis` dimension"):
        tf.layers.batch_normalization(tf.placeholder(tf.float32, [2, None]))


def test_fused_4d_moving_variance_is_bessel_corrected():
    rng = np.random.default_rng(4)
    xv = rng.normal(0.5, 2.0, size=(2, 3, 3, 4)).astype(np.float32)
    x = tf.constant(xv)
    training = tf.placeholder(tf.bool, [])
    layer = tf.layers.BatchNormalization()  # fused=None: fused for 4-D NHWC float32
    y = layer(x, training=training)
    assert layer.fused
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        train, _ = sess.run([y, layer.updates], {training: True})
        mm, mv = sess.run([layer.moving_mean, layer.moving_variance])
        infer = sess.run(y, {training: False})
    mean, var = xv.mean((0, 1, 2)), xv.var((0, 1, 2))
    n = 2 * 3 * 3
    np.testing.assert_allclose(train, _np_bn(xv, mean, var), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mm, 0.01 * mean, rtol=1e-4, atol=1e-6)
    # TF1's fused kernel reports the unbiased variance, which feeds the moving average.
    np.testing.assert_allclose(mv, 0.99 + 0.01 * var * n / (n - 1), rtol=1e-5)
    np.testing.assert_allclose(infer, _np_bn(xv, mm, mv), rtol=1e-4, atol=1e-4)
