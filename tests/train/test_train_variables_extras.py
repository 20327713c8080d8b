"""Partitioned variables, VariableScope's setters, ExponentialMovingAverage, make_template
and the linear-cosine schedules, against NumPy and hand-worked names."""

import math

import numpy as np
import pytest

import tensorflux as tf


# -- partitioners ---------------------------------------------------------------------------
def test_partitioners_follow_tf_formulas():
    shape = tf.TensorShape([1000, 10])
    assert tf.fixed_size_partitioner(3)(shape=shape, dtype=tf.float32) == [3, 1]
    assert tf.fixed_size_partitioner(4, axis=1)(shape=tf.TensorShape([2, 3]),
                                                dtype=tf.float32) == [1, 3]
    # 1000 rows of 40 bytes; 4000 bytes per shard -> 100 rows per shard -> 10 shards.
    assert tf.variable_axis_size_partitioner(4000)(shape, tf.float32) == [10, 1]
    assert tf.variable_axis_size_partitioner(4000, max_shards=3)(shape, tf.float32) == [3, 1]
    # 40000 bytes / 4096 -> ceil 9.77 = 10, capped by max_partitions.
    assert tf.min_max_variable_partitioner(4, min_slice_size=4096)(shape, tf.float32) == [4, 1]
    assert tf.min_max_variable_partitioner(64, min_slice_size=4096)(shape, tf.float32) == [10, 1]
    with pytest.raises(ValueError, match="must be positive"):
        tf.variable_axis_size_partitioner(0)
    with pytest.raises(ValueError, match="Can not partition variable along axis 2"):
        tf.min_max_variable_partitioner(2, axis=2)(shape, tf.float32)


def test_partitioned_get_variable_names_shapes_values_and_saving(tmp_path):
    full = np.arange(14.0, dtype=np.float32).reshape(7, 2)
    with tf.variable_scope("scope", partitioner=tf.fixed_size_partitioner(3)):
        w = tf.get_variable("w", initializer=tf.constant(full))
    parts = list(w)
    assert type(w).__name__ == "PartitionedVariable"
    # 7 rows in 3 parts: the first 7 % 3 = 1 part gets one row more.
    assert [p.name for p in parts] == ["scope/w/part_0:0", "scope/w/part_1:0",
                                       "scope/w/part_2:0"]
    assert [p.shape.as_list() for p in parts] == [[3, 2], [2, 2], [2, 2]]
    assert [p._get_save_slice_info().spec for p in parts] == [
        "7 2 0,3:0,2", "7 2 3,2:0,2", "7 2 5,2:0,2"]
    assert w.shape.as_list() == [7, 2] and len(w) == 3
    y = tf.matmul(tf.ones([1, 7]), w)
    # Used as a tensor: the parts concatenated, then an identity named after the variable.
    assert y.op.inputs[1].op.name == "scope/w"
    assert y.op.inputs[1].op.inputs[0].op.name == "scope/w/ConcatPartitions/concat"
    # Reuse without a partitioner returns the same PartitionedVariable.
    with tf.variable_scope("scope", reuse=True):
        assert tf.get_variable("w") is w
    # embedding_lookup treats the parts as TF's default "mod" shards.
    emb = tf.nn.embedding_lookup(w, [0, 1, 2, 6])
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(y), full.sum(0, keepdims=True))
        # mod: id i -> part i % 3, row i // 3 of that part.
        expect = np.stack([parts_np[i % 3][i // 3] for parts_np in
                           [np.split(full, [3, 5])] for i in (0, 1, 2, 6)])
        np.testing.assert_allclose(sess.run(emb), expect)
        path = saver.save(sess, str(tmp_path / "model"))
    # Saved as one full tensor, as TF's bundle does.
    assert dict(tf.train.list_variables(path)) == {"scope/w": [7, 2]}
    np.testing.assert_allclose(tf.train.load_variable(path, "scope/w"), full)
    # Restored into another partitioning and into an unpartitioned variable.
    g = tf.Graph()
    with g.as_default():
        w2 = tf.get_variable("scope/w", [7, 2], partitioner=tf.fixed_size_partitioner(2))
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, path)
            np.testing.assert_allclose(np.concatenate(sess.run(list(w2))), full)
    with tf.Graph().as_default():
        w3 = tf.get_variable("scope/w", [7, 2])
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, path)
            np.testing.assert_allclose(sess.run(w3), full)


def test_partitioned_variable_errors_and_assign():
    part = tf.fixed_size_partitioner(2)
    tf.get_variable("v", [4, 3], partitioner=part)
    with pytest.raises(ValueError, match="Partitioned variable with name v already exists"):
        tf.get_variable("v", [4, 3], partitioner=part)
    with pytest.raises(ValueError, match="specified partitions \\[3, 1\\] and found "
                                         "partitions \\[2, 1\\]"):
        with tf.variable_scope("", reuse=True):
            tf.get_variable("v", [4, 3], partitioner=tf.fixed_size_partitioner(3))
    tf.get_variable("plain", [4])
    with pytest.raises(ValueError, match="unpartitioned version of the variable was found"):
        tf.get_variable("plain", [4], partitioner=part)
    with pytest.raises(ValueError, match="Can only slice a variable along one dimension"):
        tf.get_variable("two", [4, 4], partitioner=lambda shape, dtype: [2, 2])
    with pytest.raises(ValueError, match="must be fully defined"):
        tf.get_variable("unk", [None, 2], partitioner=part,
                        initializer=tf.zeros_initializer())
    pv = tf.get_variable("pv", [5], partitioner=part, initializer=tf.zeros_initializer())
    assigns = pv.assign(np.arange(5.0, dtype=np.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(assigns)
        np.testing.assert_allclose(np.concatenate(sess.run(list(pv))), np.arange(5.0))


def test_glorot_scales_parts_by_the_full_shape():
    # A uniform limit sqrt(6 / (fan_in + fan_out)) of the FULL [600, 200] variable.
    tf.set_random_seed(1)
    w = tf.get_variable("w", [600, 200], partitioner=tf.fixed_size_partitioner(3),
                        initializer=tf.glorot_uniform_initializer())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = np.concatenate(sess.run(list(w)))
    limit = math.sqrt(6.0 / 800)
    assert np.abs(values).max() <= limit and np.abs(values).max() > 0.95 * limit


def test_create_partitioned_variables():
    vs = tf.create_partitioned_variables([10, 4], [3, 1], tf.ones_initializer(), name="emb")
    assert [v.name for v in vs] == ["emb/part_0:0", "emb/part_1:0", "emb/part_2:0"]
    assert [v.shape.as_list()[0] for v in vs] == [4, 3, 3]
    with pytest.raises(ValueError, match="must have the length"):
        tf.create_partitioned_variables([10, 4], [3], tf.ones_initializer())
    with pytest.raises(ValueError, match="rank at least 1"):
        tf.create_partitioned_variables([], [], tf.ones_initializer())


def test_variable_scope_setters_and_collections():
    with tf.variable_scope("a") as scope:
        tf.get_variable("x", [1])
        tf.get_local_variable("loc", [1])
        scope.set_partitioner(tf.fixed_size_partitioner(2))
        p = tf.get_variable("p", [4, 2])
        scope.set_partitioner(None)
        calls = []

        def getter(getter, name, *args, **kwargs):
            calls.append(name)
            return getter(name, *args, **kwargs)

        scope.set_custom_getter(getter)
        tf.get_variable("y", [1])
        scope.set_caching_device("/cpu:0")
        scope.set_use_resource(False)
        assert scope.caching_device == "/cpu:0" and scope.use_resource is False
    with tf.variable_scope("ab"):
        tf.get_variable("z", [1])
    assert len(list(p)) == 2 and calls == ["a/y"]
    assert [v.op.name for v in scope.global_variables()] == ["a/x", "a/p/part_0",
                                                             "a/p/part_1", "a/y"]
    assert [v.op.name for v in scope.trainable_variables()] == ["a/x", "a/p/part_0",
                                                                "a/p/part_1", "a/y"]
    assert [v.op.name for v in scope.local_variables()] == ["a/loc"]
    assert scope.get_collection("variables") == scope.global_variables()


# -- ExponentialMovingAverage ----------------------------------------------------------------
def test_ema_updates_names_and_restore_map():
    v = tf.Variable([1.0, 2.0], name="v")
    w = tf.Variable(5.0, name="w")
    x = tf.placeholder(tf.float32, [2])
    t = tf.identity(x, name="t")
    step = tf.Variable(0, name="step", trainable=False)
    ema = tf.train.ExponentialMovingAverage(0.9, num_updates=step)
    assert ema.name == "ExponentialMovingAverage"
    assert ema.average_name(v) == "v/ExponentialMovingAverage"
    update = ema.apply([v, w, t])
    debiased = tf.train.ExponentialMovingAverage(0.5, zero_debias=True, name="E2")
    update2 = debiased.apply([t])
    assert update.name == "ExponentialMovingAverage"
    assert ema.average(v).name == "v/ExponentialMovingAverage:0"
    assert ema.average(t).name == "t/ExponentialMovingAverage:0"
    assert debiased.average(t).name == "t/E2:0"
    names = [g.op.name for g in tf.global_variables()]
    assert "t/E2/biased" in names and "t/E2/local_step" in names
    assert tf.moving_average_variables() == [v, w]
    restore = ema.variables_to_restore()
    assert restore["v/ExponentialMovingAverage"] is v and restore["step"] is step
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        shadow_v, shadow_t, biased, steps, vv = np.array([1.0, 2.0]), np.zeros(2), \
            np.zeros(2), 0, np.array([1.0, 2.0])
        feed = np.array([1.0, 3.0])
        for i in range(4):
            sess.run([update, update2], {x: feed})
            d = min(0.9, (1.0 + i) / (10.0 + i))  # num_updates is the step variable
            shadow_v = shadow_v - (1 - d) * (shadow_v - vv)
            shadow_t = shadow_t - (1 - d) * (shadow_t - feed)
            biased, steps = biased - 0.5 * (biased - feed), steps + 1
            sess.run([tf.assign_add(v, [1.0, 1.0]), tf.assign_add(step, 1)])
            vv = vv + 1
        np.testing.assert_allclose(sess.run(ema.average(v)), shadow_v, rtol=1e-6)
        np.testing.assert_allclose(sess.run(ema.average(w)), 5.0)
        np.testing.assert_allclose(sess.run(ema.average(t)), shadow_t, rtol=1e-6)
        np.testing.assert_allclose(sess.run(debiased.average(t)),
                                   biased / (1 - 0.5 ** steps), rtol=1e-6)
    with pytest.raises(TypeError, match="must be half, float, or double"):
        ema.apply([tf.Variable(1, name="i")])


# -- make_template ---------------------------------------------------------------------------
def test_make_template_shares_variables_and_names_scopes():
    def linear(x, scale):
        w = tf.get_variable("w", [2], initializer=tf.ones_initializer())
        return x * w * scale

    t = tf.make_template("lin", linear, scale=2.0)
    assert t.variable_scope_name is None and t.trainable_variables == []
    a, b = t(tf.ones([2])), t(tf.constant([3.0, 4.0]))
    t2 = tf.make_template("lin", linear, scale=3.0)
    c = t2(tf.ones([2]))
    now = tf.make_template("now", linear, create_scope_now_=True, scale=1.0)
    fixed = tf.make_template("x", linear, unique_name_="given", scale=1.0)
    with tf.variable_scope("outer"):
        d = now(tf.ones([2]))
        fixed(tf.ones([2]))
    # create_scope_now_ picked "now" at the root; unique_name_ is opened where called.
    assert [v.op.name for v in tf.global_variables()] == ["lin/w", "lin_1/w", "now/w",
                                                          "outer/given/w"]
    assert t.variable_scope_name == "lin/" and [v.op.name for v in t.variables] == ["lin/w"]
    assert t.name == "lin" and a.op.name.startswith("lin/") and d.op.name.startswith(
        "outer/now/")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(t.variables[0], [5.0, 6.0]))
        np.testing.assert_allclose(sess.run([a, b, c]), [[10, 12], [30, 48], [3, 3]])

    def makes_variable(x):
        return x * tf.Variable(1.0)

    bad = tf.make_template("bad", makes_variable)
    bad(1.0)
    with pytest.raises(ValueError, match="Trainable variable created when calling a template "
                                         "after the first time"):
        bad(1.0)


# -- schedules -------------------------------------------------------------------------------
def test_linear_cosine_schedules_match_numpy():
    step = tf.placeholder(tf.int64, [])
    lcd = tf.train.linear_cosine_decay(0.1, step, 20, num_periods=1.5, alpha=0.1, beta=0.01)
    noisy = tf.train.noisy_linear_cosine_decay(0.1, step, 20, initial_variance=0.0)
    assert lcd.op.name == "LinearCosineDecay" and noisy.op.name == "NoisyLinearCosineDecay"
    assert tf.train.piecewise_constant_decay is tf.train.piecewise_constant
    pw = tf.train.piecewise_constant_decay(step, [5, 10], [1.0, 0.5, 0.1])
    with tf.Session() as sess:
        for s in (0, 7, 20, 35):
            got, got_noisy, got_pw = sess.run([lcd, noisy, pw], {step: s})
            c = min(s, 20)
            linear = (20 - c) / 20
            cosine = 0.5 * (1 + math.cos(math.pi * 2 * 1.5 * c / 20))
            np.testing.assert_allclose(got, 0.1 * ((0.1 + linear) * cosine + 0.01), rtol=1e-5)
            cosine = 0.5 * (1 + math.cos(math.pi * 2 * 0.5 * c / 20))
            np.testing.assert_allclose(got_noisy, 0.1 * (linear * cosine + 0.001), rtol=1e-5,
                                       atol=1e-7)
            assert got_pw == (1.0 if s <= 5 else 0.5 if s <= 10 else 0.1)
        # With variance the noise changes run to run: the draws differ.
        noisy2 = tf.train.noisy_linear_cosine_decay(1.0, step, 20)
        draws = {float(sess.run(noisy2, {step: 3})) for _ in range(3)}
        assert len(draws) == 3
    with pytest.raises(ValueError, match="requires global_step"):
        tf.train.linear_cosine_decay(0.1, None, 10)
