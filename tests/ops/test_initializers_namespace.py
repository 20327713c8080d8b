"""tf.initializers: TF1's aliases of the initializer classes and initializer ops, and
tables_initializer over the TABLE_INITIALIZERS collection."""

import numpy as np

import tensorflux as tf

I = tf.initializers


def test_aliases_are_the_top_level_objects():
    pairs = {
        "constant": tf.constant_initializer, "zeros": tf.zeros_initializer,
        "ones": tf.ones_initializer, "random_normal": tf.random_normal_initializer,
        "random_uniform": tf.random_uniform_initializer,
        "truncated_normal": tf.truncated_normal_initializer,
        "uniform_unit_scaling": tf.uniform_unit_scaling_initializer,
        "variance_scaling": tf.variance_scaling_initializer,
        "orthogonal": tf.orthogonal_initializer, "identity": tf.identity_initializer,
        "glorot_uniform": tf.glorot_uniform_initializer,
        "glorot_normal": tf.glorot_normal_initializer,
        "global_variables": tf.global_variables_initializer,
        "local_variables": tf.local_variables_initializer,
        "variables": tf.variables_initializer, "tables_initializer": tf.tables_initializer,
        "he_normal": tf.he_normal, "lecun_uniform": tf.lecun_uniform,
    }
    for name, obj in pairs.items():
        assert getattr(I, name) is obj, name
    assert tf.compat.v1.initializers is I


def test_he_and_lecun_use_tf_variance_scaling_parameters():
    # he: scale 2, lecun: scale 1, both over fan_in (= 400 here).
    he_n = I.he_normal(seed=1)([400, 300])
    he_u = I.he_uniform(seed=2)([400, 300])
    lecun_u = I.lecun_uniform(seed=3)([400, 300])
    for init in (I.he_normal(), I.he_uniform(), I.lecun_normal(), I.lecun_uniform()):
        assert isinstance(init, I.variance_scaling) and init.mode == "fan_in"
    with tf.Session() as sess:
        a, b, c = sess.run([he_n, he_u, lecun_u])
    np.testing.assert_allclose(a.var(), 2.0 / 400, rtol=0.03)
    assert np.abs(a).max() <= 2 * np.sqrt(2.0 / 400) / 0.87962566103423978 + 1e-6
    limit = np.sqrt(3 * 2.0 / 400)
    assert np.abs(b).max() <= limit and np.abs(b).max() > 0.99 * limit
    np.testing.assert_allclose(b.var(), 2.0 / 400, rtol=0.03)
    np.testing.assert_allclose(c.var(), 1.0 / 400, rtol=0.03)


def test_variable_initializer_aliases_run_what_they_name():
    g = tf.Variable(1.0)
    loc = tf.Variable(2.0, collections=[tf.GraphKeys.LOCAL_VARIABLES])
    other = tf.Variable(3.0)
    with tf.Session() as sess:
        sess.run(I.variables([other]))
        assert sess.run(tf.report_uninitialized_variables()).tolist() == [b"Variable",
                                                                          b"Variable_1"]
        sess.run(I.global_variables())
        sess.run(I.local_variables())
        assert sess.run([g, loc, other]) == [1.0, 2.0, 3.0]


def test_tables_initializer_groups_the_collection():
    empty = tf.tables_initializer()
    assert empty.type == "NoOp" and empty.name == "init_all_tables"
    assert not empty.control_inputs
    v = tf.Variable(0.0)
    fill = tf.assign(v, 5.0).op
    tf.add_to_collection(tf.GraphKeys.TABLE_INITIALIZERS, fill)
    init = tf.tables_initializer(name="tables")
    legacy = tf.initialize_all_tables()
    assert init.type == "NoOp" and init.name == "tables" and init.control_inputs == [fill]
    assert legacy.name == "init_all_tables_1" and legacy.control_inputs == [fill]
    with tf.Session() as sess:
        sess.run(init)
        assert sess.run(v) == 5.0
