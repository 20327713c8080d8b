"""tf.layers Dense / Dropout / Flatten: TF1 names, reuse, regularizers, values vs NumPy."""

import numpy as np
import pytest

import tensorflux as tf


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def _op_names():
    return [op.name for op in tf.get_default_graph().get_operations()]


def test_dense_variable_and_op_names_match_tf1():
    x = tf.placeholder(tf.float32, [None, 4])
    h = tf.layers.dense(x, 3, activation=tf.nn.relu)
    y = tf.layers.dense(h, 2)
    assert [v.name for v in tf.global_variables()] == [
        "dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0"]
    assert [v.name for v in tf.trainable_variables()] == [v.name for v in tf.global_variables()]
    assert h.name == "dense/Relu:0" and y.name == "dense_1/BiasAdd:0"
    assert h.shape.as_list() == [None, 3] and y.shape.as_list() == [None, 2]
    names = _op_names()
    assert {"dense/MatMul", "dense/BiasAdd", "dense/kernel/Initializer/random_uniform",
            "dense/bias/Initializer/zeros"} <= set(names)


def test_dense_matches_numpy_and_default_initializers():
    rng = np.random.default_rng(0)
    xv = rng.normal(size=(5, 20)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 20])
    layer = tf.layers.Dense(30, activation=tf.tanh)
    y = layer(x)
    out, kernel, bias = _run([y, layer.kernel, layer.bias], {x: xv})
    limit = np.sqrt(6.0 / (20 + 30))  # glorot uniform
    assert np.abs(kernel).max() <= limit and kernel.std() > limit / 3
    np.testing.assert_array_equal(bias, np.zeros(30))
    np.testing.assert_allclose(out, np.tanh(xv @ kernel + bias), rtol=1e-5, atol=1e-6)


def test_dense_on_rank_3_inputs_and_float64():
    rng = np.random.default_rng(1)
    xv = rng.normal(size=(2, 3, 4))
    x = tf.constant(xv)  # float64: the layer takes its dtype from the input
    layer = tf.layers.Dense(5, use_bias=False, kernel_initializer=tf.ones_initializer())
    y = layer(x)
    assert layer.kernel.dtype.base_dtype == tf.float64 and layer.bias is None
    assert y.shape.as_list() == [2, 3, 5]
    np.testing.assert_allclose(_run(y), xv @ np.ones((4, 5)))


def test_layer_object_shares_variables_across_calls():
    layer = tf.layers.Dense(3, name="fc")
    a = layer(tf.placeholder(tf.float32, [None, 2]))
    b = layer(tf.placeholder(tf.float32, [None, 2]))
    assert len(tf.global_variables()) == 2 and layer.name == "fc"
    assert layer.kernel.name == "fc/kernel:0" and layer.scope_name == "fc"
    assert a.op.name == "fc/BiasAdd" and b.op.name == "fc/BiasAdd_1"
    assert layer.trainable_weights == [layer.kernel, layer.bias] == layer.variables
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 2"):
        layer(tf.placeholder(tf.float32, [None, 7]))


def test_unnamed_layer_objects_get_unique_scopes():
    x = tf.placeholder(tf.float32, [None, 2])
    first, second = tf.layers.Dense(1), tf.layers.Dense(1)
    first(x), second(x)
    assert (first.scope_name, second.scope_name) == ("dense", "dense_1")
    with pytest.raises(ValueError, match="has not been used yet"):
        tf.layers.Dense(1).scope_name  # noqa: B018


def test_functional_name_is_the_scope_and_reuse_shares_it():
    x = tf.placeholder(tf.float32, [None, 2])
    y1 = tf.layers.dense(x, 3, name="fc")
    y2 = tf.layers.dense(x, 3, name="fc", reuse=True)
    assert len(tf.global_variables()) == 2
    with pytest.raises(ValueError, match="Variable fc/kernel already exists, disallowed"):
        tf.layers.dense(x, 3, name="fc")
    with pytest.raises(ValueError, match="Variable other/kernel does not exist"):
        tf.layers.dense(x, 3, name="other", reuse=True)
    a, b = _run([y1, y2], {x: np.ones((1, 2))})
    np.testing.assert_array_equal(a, b)


def test_layers_inside_variable_scopes():
    x = tf.placeholder(tf.float32, [None, 2])
    with tf.variable_scope("model"):
        y1 = tf.layers.dense(x, 3, name="fc")
        h = tf.layers.dense(x, 4)
    with tf.variable_scope("model", reuse=True):
        y2 = tf.layers.dense(x, 3, name="fc")
    assert [v.name for v in tf.global_variables()] == [
        "model/fc/kernel:0", "model/fc/bias:0", "model/dense/kernel:0", "model/dense/bias:0"]
    assert h.op.name == "model/dense/BiasAdd" and y2.op.name == "model_1/fc/BiasAdd"
    a, b = _run([y1, y2], {x: np.ones((1, 2))})
    np.testing.assert_array_equal(a, b)


def test_unnamed_layers_are_shared_when_their_scope_is_reentered_with_reuse():
    x = tf.placeholder(tf.float32, [None, 2])
    with tf.variable_scope("net"):
        tf.layers.dense(x, 3)
    with tf.variable_scope("net", reuse=True):
        tf.layers.dense(x, 3)  # TF1: net/dense again, reused
    assert [v.name for v in tf.global_variables()] == ["net/dense/kernel:0",
                                                       "net/dense/bias:0"]


def test_scope_initializer_and_trainable_false():
    x = tf.placeholder(tf.float32, [None, 2])
    with tf.variable_scope("s", initializer=tf.constant_initializer(0.5)):
        y = tf.layers.dense(x, 2, trainable=False, bias_initializer=tf.ones_initializer())
    assert tf.trainable_variables() == [] and len(tf.global_variables()) == 2
    np.testing.assert_allclose(_run(y, {x: [[1.0, 2.0]]}), [[2.5, 2.5]])


def test_kernel_bias_and_activity_regularizers():
    xv = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
    x = tf.constant(xv)
    layer = tf.layers.Dense(3, kernel_regularizer=tf.regularizers.l2_regularizer(0.1),
                            bias_regularizer=tf.regularizers.l1_regularizer(0.2),
                            bias_initializer=tf.constant_initializer(-1.0),
                            activity_regularizer=tf.regularizers.l2_regularizer(0.5))
    y = layer(x)
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert [t.name for t in losses[:2]] == ["dense/kernel/Regularizer/l2_regularizer:0",
                                            "dense/bias/Regularizer/l1_regularizer:0"]
    assert len(losses) == 3 and layer.losses == losses
    layer(x)  # a second call reuses the variables: only a new activity loss
    assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 4
    total = tf.losses.get_regularization_loss()
    got = _run(losses + [total, y, layer.kernel])
    kernel, out = got[-1], got[-2]
    np.testing.assert_allclose(got[0], 0.1 * np.sum(kernel ** 2) / 2, rtol=1e-5)
    np.testing.assert_allclose(got[1], 0.2 * 3.0, rtol=1e-6)
    # Activity loss: the regularizer of the output, divided by the batch size.
    np.testing.assert_allclose(got[2], 0.5 * np.sum(out ** 2) / 2 / 2, rtol=1e-5)
    np.testing.assert_allclose(got[3], got[0] + got[1] + 2 * got[2], rtol=1e-5)


def test_dense_input_checks():
    with pytest.raises(ValueError, match="expected min_ndim=2, found ndim=1"):
        tf.layers.dense(tf.constant([1.0, 2.0]), 2)
    with pytest.raises(ValueError, match="The last dimension of the inputs to `Dense` should "
                                         "be defined"):
        tf.layers.dense(tf.placeholder(tf.float32, [None, None]), 2)
    with pytest.raises(TypeError, match="non-floating point dtype"):
        tf.layers.dense(tf.constant([[1, 2]]), 2)
    with pytest.raises(ValueError, match="its rank is undefined"):
        tf.layers.dense(tf.placeholder(tf.float32), 2)


def test_dropout_inference_is_identity_and_training_scales():
    x = tf.ones([100, 100])
    assert _run(tf.layers.dropout(x, 0.3)).min() == 1.0  # training=False by default
    tf.set_random_seed(3)
    out = _run(tf.layers.dropout(x, rate=0.25, training=True))
    kept = out != 0
    np.testing.assert_allclose(out[kept], 1 / 0.75, rtol=1e-6)
    assert 0.72 < kept.mean() < 0.78


def test_dropout_training_flag_tensor_and_noise_shape():
    x = tf.ones([200, 10])
    training = tf.placeholder(tf.bool, [])
    layer = tf.layers.Dropout(0.5, noise_shape=[None, 1])
    y = layer(x, training=training)
    assert y.shape.as_list() == [200, 10] and y.op.name.startswith("dropout/")
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {training: False}), np.ones((200, 10)))
        on = sess.run(y, {training: True})
        again = sess.run(y, {training: True})
    # One draw per row, shared by the row's 10 columns.
    assert set(np.unique(on)) <= {0.0, 2.0} and np.all(on == on[:, :1])
    assert 0.35 < (on[:, 0] != 0).mean() < 0.65
    assert not np.array_equal(on, again)  # fresh randomness on each run


def test_flatten_channels_last_and_first():
    xv = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    y = tf.layers.flatten(tf.constant(xv))
    z = tf.layers.Flatten(data_format="channels_first")(tf.constant(xv))
    p = tf.layers.flatten(tf.placeholder(tf.float32, [None, 3, 4]))
    assert y.shape.as_list() == [2, 60] and p.shape.as_list() == [None, 12]
    assert y.op.name == "flatten/Reshape"
    got_y, got_z = _run([y, z])
    np.testing.assert_array_equal(got_y, xv.reshape(2, -1))
    np.testing.assert_array_equal(got_z, xv.transpose(0, 2, 3, 1).reshape(2, -1))
    with pytest.raises(ValueError, match="The `data_format` argument must be one of"):
        tf.layers.Flatten(data_format="NHWC")


def test_layer_base_class_can_be_subclassed():
    class Scale(tf.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight("w", [int(input_shape[-1])],
                                     initializer=tf.constant_initializer(2.0))
            self.built = True

        def call(self, inputs):
            return inputs * self.w

    layer = Scale()
    y = layer(tf.constant([[1.0, 3.0]]))
    assert layer.w.name == "scale/w:0" and y.op.name.startswith("scale/")
    np.testing.assert_array_equal(_run(y), [[2.0, 6.0]])
    with pytest.raises(TypeError, match="Keyword argument not understood"):
        tf.layers.Dense(3, bogus=1)


@pytest.mark.parametrize("spec, bad, message", [
    (dict(ndim=2), [1.0], "expected ndim=2, found ndim=1"),
    (dict(max_ndim=1), [[1.0]], "expected max_ndim=1, found ndim=2"),
    (dict(shape=(None, 3)), [[1.0, 2.0]], r"expected shape=\(None, 3\), found shape=\[1, 2\]"),
    (dict(dtype="float32"), [1], "expected dtype=float32, found dtype=int32"),
])
def test_input_specs(spec, bad, message):
    class Checked(tf.layers.Layer):
        def __init__(self):
            super().__init__()
            self.input_spec = tf.layers.InputSpec(**spec)

    with pytest.raises(ValueError, match=message):
        Checked()(tf.constant(bad))


def test_build_before_call_and_count_params():
    dense = tf.layers.Dense(16)
    with pytest.raises(ValueError, match="isn't built"):
        dense.count_params()
    dense.build((None, 4))
    assert dense.count_params() == 16 * 4 + 16 and dense.kernel.name == "dense/kernel:0"
