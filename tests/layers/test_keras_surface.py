"""The Keras Layer surface tf.layers layers (and RNN cells) inherit: configs, weights as
values, nodes, masks, metrics, Keras-style naming."""

import numpy as np
import pytest

import tensorflux as tf


def test_config_round_trip_rebuilds_the_same_layer():
    layer = tf.layers.Dense(4, activation=tf.nn.relu, use_bias=False, name="fc")
    config = layer.get_config()
    assert config["units"] == 4 and config["use_bias"] is False and config["name"] == "fc"
    assert config["activation"] is tf.nn.relu and config["trainable"] is True
    clone = tf.layers.Dense.from_config(dict(config, name="fc2"))
    assert clone.units == 4 and clone.use_bias is False and clone.name == "fc2"
    conv = tf.layers.Conv2D(8, 3, strides=2, padding="same")
    assert tf.layers.Conv2D.from_config(conv.get_config()).strides == (2, 2)


def test_weights_as_values_through_the_default_session():
    x = tf.placeholder(tf.float32, [None, 3])
    layer = tf.layers.Dense(2, kernel_initializer=tf.ones_initializer(),
                            bias_initializer=tf.zeros_initializer())
    y = layer(x)
    with pytest.raises(ValueError, match="no default Session"):
        layer.get_weights()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kernel, bias = layer.get_weights()
        np.testing.assert_array_equal(kernel, np.ones((3, 2)))
        new_kernel = np.arange(6.0).reshape(3, 2)
        layer.set_weights([new_kernel, np.array([1.0, -1.0])])
        out = sess.run(y, {x: [[1.0, 2.0, 3.0]]})
        np.testing.assert_allclose(out, [[1.0 * 0 + 2 * 2 + 3 * 4 + 1, 1 + 2 * 3 + 3 * 5 - 1]])
        store = {}
        layer.save_own_variables(store)
        np.testing.assert_array_equal(store["0"], new_kernel)
        store["1"] = np.array([5.0, 5.0])
        layer.load_own_variables(store)
        np.testing.assert_array_equal(sess.run(layer.bias), [5.0, 5.0])
        with pytest.raises(ValueError, match="expecting 2 weights"):
            layer.set_weights([new_kernel])
        with pytest.raises(ValueError, match=r"not compatible with provided weight shape \(2, 2\)"):
            layer.set_weights([np.zeros((2, 2)), np.zeros(2)])
    assert layer.get_build_config() == {"input_shape": (None, 3)}
    rebuilt = tf.layers.Dense(2)
    rebuilt.build_from_config(layer.get_build_config())
    assert rebuilt.built and rebuilt.kernel.shape.as_list() == [3, 2]


def test_nodes_inputs_outputs_and_shapes():
    a = tf.placeholder(tf.float32, [None, 5], name="a")
    first = tf.layers.Dense(3, name="first")
    second = tf.layers.Dense(2, name="second")
    h = first(a)
    out = second(h)
    assert first.input is a and first.output is h and second.input is h
    assert first.input_shape == (None, 5) and second.output_shape == (None, 2)
    assert first.outbound_nodes == second.inbound_nodes and len(first.inbound_nodes) == 1
    assert second.inbound_nodes[0].inbound_layers == [first]
    assert first.input_mask is None and second.output_mask is None
    b = tf.placeholder(tf.float32, [4, 5], name="b")
    first(b)
    assert first.get_input_at(1) is b and first.get_output_shape_at(1) == (4, 3)
    with pytest.raises(AttributeError, match="multiple inbound nodes"):
        first.input
    with pytest.raises(AttributeError, match="different input shapes"):
        first.input_shape
    fresh = tf.layers.Dense(1)
    with pytest.raises(AttributeError, match="is not connected"):
        fresh.output
    with pytest.raises(AttributeError, match="never been called"):
        fresh.output_shape
    assert out.shape.as_list() == [None, 2]


def test_masks_flags_dtypes_and_signature():
    layer = tf.layers.Dense(3, dtype=tf.float64)
    assert not layer.supports_masking and not layer.stateful and not layer.dynamic
    assert layer.compute_mask(tf.zeros([2, 3])) is None
    with pytest.raises(TypeError, match="does not support masking"):
        layer.compute_mask(tf.zeros([2, 3]), mask=tf.ones([2], tf.bool))
    assert layer.compute_dtype == "float64" and layer.dtype_policy.name == "float64"
    signature = layer.compute_output_signature(tf.TensorSpec([None, 7], tf.float64))
    assert signature == tf.TensorSpec([None, 3], tf.float64)
    layer.trainable = False
    assert layer.get_config()["trainable"] is False


def test_metrics_submodules_and_name_scopes():
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicRNNCell(2),
                                        tf.nn.rnn_cell.BasicRNNCell(2)])
    assert len(cell.submodules) == 2
    layer = tf.layers.Dense(1, name="scored")
    x = tf.constant([[1.0], [3.0]])
    layer(x)
    layer.add_metric(tf.reduce_mean(x), aggregation="mean", name="mean_x")
    with pytest.raises(ValueError, match="only `mean`"):
        layer.add_metric(tf.constant(1.0), aggregation="sum")
    with layer.name_scope:
        inside = tf.constant(0.0, name="c")
    assert inside.op.name.startswith("scored/c")
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(layer.metrics[0]) == 2.0


def test_keras_style_scope_names_layers_by_their_own_names():
    with tf.layers.experimental.keras_style_scope():
        with tf.variable_scope("outer"):
            a = tf.layers.Dense(2)
            b = tf.layers.Dense(2)
            x = tf.zeros([1, 3])
            a(x)
            b(x)
        with pytest.raises(ValueError, match="reuse argument not allowed"):
            tf.layers.Dense(2, _reuse=True)
    assert a.name == "dense" and b.name == "dense_1"
    # the enclosing scope prefixes the names, as Keras layers built in it are named
    assert a.kernel.name == "outer/dense/kernel:0" and b.kernel.name == "outer/dense_1/kernel:0"
