import numpy as np
import pytest

import tensorflux as tf


def test_tf1_op_structure_and_names():
    v = tf.Variable([1.0], name="v")
    names = [op.name for op in tf.get_default_graph().get_operations()]
    assert names == ["v/initial_value", "v", "v/Assign", "v/read"]
    assert v.name == "v:0" and v.op.type == "VariableV2"
    assert repr(v) == "<tf.Variable 'v:0' shape=(1,) dtype=float32_ref>"
    assert v.dtype == tf.float32._as_ref and v.dtype.base_dtype == tf.float32
    assert v.initializer.name == "v/Assign" and v.value().name == "v/read:0"
    assert v.initial_value.op.name == "v/initial_value"
    assert tf.Variable(1, name="v").name == "v_1:0"


def test_initializer_and_collections():
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b", trainable=False)
    c = tf.Variable(3.0, name="c", trainable=False,
                    collections=[tf.GraphKeys.LOCAL_VARIABLES])
    assert tf.global_variables() == [a, b]
    assert tf.trainable_variables() == [a]
    assert tf.local_variables() == [c]
    init = tf.global_variables_initializer()
    assert init.name == "init" and init.type == "NoOp"
    assert tf.local_variables_initializer().name == "init_1"
    with tf.Session() as sess:
        sess.run(init)
        assert sess.run([a, b]) == [1.0, 2.0]
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(c.value())
        sess.run(tf.local_variables_initializer())
        assert sess.run(c) == 3.0


def test_uninitialized_read_error():
    v = tf.Variable([1.0, 2.0], name="v")
    with tf.Session() as sess, pytest.raises(tf.errors.FailedPreconditionError) as e:
        sess.run(v.value() * 2.0)
    assert e.value.message.startswith("Attempting to use uninitialized value v")
    assert e.value.error_code == tf.errors.FAILED_PRECONDITION


def test_assign_ops_and_state_persists_across_runs():
    v = tf.Variable([1.0, 2.0], name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(tf.assign_add(v, [1.0, 1.0]))
        sess.run(v.assign_sub([0.5, 0.5]))
        np.testing.assert_array_equal(sess.run(v), [1.5, 2.5])
        got = sess.run(tf.assign(v, [9.0, 8.0]))
        np.testing.assert_array_equal(got, [9.0, 8.0])
        np.testing.assert_array_equal(v.eval(), [9.0, 8.0])
    with tf.Session() as sess:  # a new session has its own (uninitialized) state
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(v)


def test_reads_see_start_value_unless_ordered_after_update():
    v = tf.Variable(10.0, name="v")
    update = v.assign_add(1.0)
    unordered = v.value() * 1.0
    with tf.control_dependencies([update]):
        ordered = v.read_value()
    with tf.Session() as sess:
        sess.run(v.initializer)
        got_unordered, got_ordered, got_update = sess.run([unordered, ordered, update])
        assert got_unordered == 10.0 and got_ordered == 11.0 and got_update == 11.0
        assert sess.run(v) == 11.0


def test_chained_updates_in_one_run():
    v = tf.Variable(1.0)
    a = v.assign(v * 3.0)  # reads start value, writes 3
    with tf.control_dependencies([a]):
        b = v.assign_add(2.0)  # ordered after a: 5
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(b) == 5.0
        assert sess.run(v) == 5.0


def test_scatter_ops():
    v = tf.Variable(np.zeros((4, 2), np.float32))
    upd = tf.scatter_update(v, [0, 2], [[1.0, 1.0], [2.0, 2.0]])
    add = tf.scatter_add(v, [1, 1], [[1.0, 2.0], [3.0, 4.0]])
    sub = tf.scatter_sub(v, [3], [[1.0, 1.0]])
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(upd)
        sess.run(add)
        got = sess.run(sub)
    np.testing.assert_array_equal(got, [[1, 1], [4, 6], [2, 2], [-1, -1]])


def test_is_variable_initialized_and_load():
    v = tf.Variable([1, 2], name="v")
    ok = tf.is_variable_initialized(v)
    with tf.Session() as sess:
        assert not sess.run(ok)
        v.load([5, 6], sess)
        assert sess.run(ok)
        np.testing.assert_array_equal(sess.run(v), [5, 6])


def test_callable_initial_value_and_dtype():
    v = tf.Variable(lambda: tf.constant([1, 2]), dtype=tf.int32, name="f")
    assert v.initial_value.op.name.startswith("f/Initializer/")
    w = tf.Variable([1, 2], dtype=tf.float64)
    assert w.dtype.base_dtype == tf.float64
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(v), [1, 2])


def test_validate_shape_false_allows_new_shape():
    v = tf.Variable([1.0, 2.0], validate_shape=False)
    assert v.shape.ndims is None
    grow = tf.assign(v, [1.0, 2.0, 3.0], validate_shape=False)
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(grow)
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0, 3.0])


def test_assign_shape_mismatch_and_lvalue_errors():
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match="incompatible"):
        tf.assign(v, [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match=r"'AssignAdd' Op requires that input 'ref' be a mutable tensor \(e\.g\.: a tf\.Variable\)"):
        tf.assign_add(tf.constant([1.0, 2.0]), [1.0, 1.0])


def test_variable_operators_use_the_snapshot():
    v = tf.Variable([1.0, 2.0])
    y = v * 2.0 + v
    assert y.op.inputs[1] is v.value()
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(y), [3.0, 6.0])


def test_update_donates_the_old_buffer():
    v = tf.Variable(np.ones(1000, np.float32))
    step = v.assign_sub(v * 0.5)
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(step)
        before = sess._state.variables[v.op]
        sess.run(step)
        assert before.is_deleted()  # updated in place: the old buffer was donated
        np.testing.assert_allclose(sess.run(v), np.full(1000, 0.25))


def test_control_dependency_of_a_constant_still_runs():
    v = tf.Variable(0.0)
    inc = v.assign_add(1.0)
    with tf.control_dependencies([inc]):
        c = tf.constant(5.0) * 2.0
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(c) == 10.0
        assert sess.run(c) == 10.0
        assert sess.run(v) == 2.0


def test_report_uninitialized_variables():
    a = tf.Variable(1.0, name="a")
    b = tf.Variable([2, 3], name="b")
    report = tf.report_uninitialized_variables()
    with tf.Session() as sess:
        assert list(sess.run(report)) == [b"a", b"b"]
        sess.run(a.initializer)
        assert list(sess.run(report)) == [b"b"]
        sess.run(b.initializer)
        got = sess.run(report)
        assert got.shape == (0,) and got.dtype == object
