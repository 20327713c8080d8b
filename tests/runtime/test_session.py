import collections

import numpy as np
import pytest

import tensorflux as tf


def test_readme_example_runs():
    with tf.Session() as sess:
        got = sess.run(tf.constant([1, 2, 3, 4]) + tf.constant([1, 2, 3, 4]))
    np.testing.assert_array_equal(got, [2, 4, 6, 8])
    assert got.dtype == np.int32


def test_fetch_structures():
    a, b = tf.constant(1), tf.constant(2.0)
    Pair = collections.namedtuple("Pair", "x y")
    with tf.Session() as sess:
        assert sess.run([a, b]) == [1, 2.0]
        assert sess.run((a, b)) == (1, 2.0)
        assert sess.run({"a": a, "nested": [b, (a,)]}) == {"a": 1, "nested": [2.0, (1,)]}
        assert sess.run(Pair(a, b)) == Pair(1, 2.0)
        assert sess.run("Const:0") == 1
        assert sess.run(a.op) is None
        assert sess.run([a, a.op, "Const_1:0"]) == [1, None, 2.0]


def test_feeds_by_tensor_and_name_with_conversion():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = x * 2.0
    with tf.Session() as sess:
        got = sess.run(y, {x: [[1, 2, 3]]})
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, [[2, 4, 6]])
        np.testing.assert_array_equal(sess.run(y, {"x:0": np.ones((2, 3))}), np.full((2, 3), 2))


def test_feed_shape_error_wording():
    x = tf.placeholder(tf.float32, [None, 3])
    with tf.Session() as sess:
        with pytest.raises(ValueError) as e:
            sess.run(x * 1.0, {x: np.zeros((2, 4))})
    assert str(e.value) == ("Cannot feed value of shape (2, 4) for Tensor 'Placeholder:0', "
                            "which has shape '(?, 3)'")


def test_unfed_placeholder_error():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            sess.run(x + 1.0)
    assert ("You must feed a value for placeholder tensor 'x' with dtype float and shape [?,3]"
            in e.value.message)
    assert e.value.error_code == tf.errors.INVALID_ARGUMENT
    assert e.value.op is x.op


def test_unfed_placeholder_unknown_shape_and_int_dtype():
    x = tf.placeholder(tf.int64, name="ids")
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="placeholder tensor 'ids' with dtype int64\n"):
        sess.run(x)


def test_closed_session():
    sess = tf.Session()
    sess.close()
    with pytest.raises(RuntimeError, match="Attempted to use a closed Session."):
        sess.run(tf.constant(1))


@pytest.mark.parametrize("fetch, error, message", [
    (None, TypeError, "Fetch argument None has invalid type <class 'NoneType'>"),
    (1, TypeError, "Fetch argument 1 has invalid type <class 'int'>, must be a string or Tensor"),
    ("nope:0", ValueError, "Fetch argument 'nope:0' cannot be interpreted as a Tensor"),
])
def test_bad_fetches(fetch, error, message):
    tf.constant(1)
    with tf.Session() as sess, pytest.raises(error, match=message.replace("(", r"\(")
                                             .replace(")", r"\)")):
        sess.run(fetch)


def test_fetch_from_another_graph():
    with tf.Graph().as_default():
        other = tf.constant(1)
    with tf.Session() as sess, pytest.raises(ValueError, match="is not an element of this graph"):
        sess.run(other)


def test_feed_value_cannot_be_tensor():
    x = tf.placeholder(tf.float32)
    with tf.Session() as sess, pytest.raises(TypeError, match="The value of a feed cannot be a "
                                                             "tf.Tensor object"):
        sess.run(x, {x: tf.constant(1.0)})


def test_feed_int_too_large():
    x = tf.placeholder(tf.int32)
    with tf.Session() as sess, pytest.raises(TypeError, match="is not compatible with Tensor type"):
        sess.run(x, {x: 2 ** 40})


def test_feeding_any_tensor_replaces_its_computation():
    a = tf.constant(2.0)
    b = a * 3.0
    c = b + 1.0
    with tf.Session() as sess:
        assert sess.run(c) == 7.0
        assert sess.run(c, {b: 10.0}) == 11.0
        assert sess.run(b, {b: 5.0}) == 5.0  # fetching a fed tensor returns the feed


def test_eval_and_run_with_default_session():
    a = tf.constant([1, 2])
    with pytest.raises(ValueError, match="No default session is registered"):
        a.eval()
    with tf.Session():
        np.testing.assert_array_equal(a.eval(), [1, 2])
        assert a.op.run() is None
    sess = tf.Session()
    with sess.as_default():
        np.testing.assert_array_equal(a.eval(), [1, 2])
    np.testing.assert_array_equal(a.eval(session=sess), [1, 2])


def test_eval_rejects_session_of_other_graph():
    with tf.Graph().as_default():
        other_sess = tf.Session()
    a = tf.constant(1)
    with pytest.raises(ValueError, match="the tensor's graph is different from the session's"):
        a.eval(session=other_sess)


def test_interactive_session_installs_itself():
    sess = tf.InteractiveSession()
    try:
        assert tf.get_default_session() is sess
        assert (tf.constant(2) * 3).eval() == 6
    finally:
        sess.close()
    assert tf.get_default_session() is not sess


def test_session_uses_given_graph():
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(5)
    with tf.Session(graph=g) as sess:
        assert sess.graph is g and sess.run(c) == 5


def test_repeated_run_does_not_retrace():
    x = tf.placeholder(tf.float32, [None])
    y = tf.sin(x) * 2.0 + 1.0
    with tf.Session() as sess:
        v = np.arange(4, dtype=np.float32)
        first = sess.run(y, {x: v})
        traces = sess.compile_stats.traces
        for _ in range(5):
            np.testing.assert_allclose(sess.run(y, {x: v}), first)
        assert sess.compile_stats.traces == traces
        # a new feed shape is a new executable
        sess.run(y, {x: np.zeros(7, np.float32)})
        assert sess.compile_stats.traces == traces + 1
        # adding unrelated ops bumps the graph version, but the pruned run is unchanged
        tf.constant(3.0) * 4.0
        sess.run(y, {x: v})
        assert sess.compile_stats.traces == traces + 1


def test_cached_reading_run_sees_each_new_variable_value():
    # A run that only reads variables takes the cached fast path after its first call;
    # it must still read the store at every call, including while another thread trains.
    import threading
    v = tf.Variable(np.zeros(3, np.float32))
    x = tf.placeholder(tf.float32, [3])
    read = tf.reduce_sum(v * x)
    step = tf.assign_add(v, np.ones(3, np.float32))
    ones = np.ones(3, np.float32)
    with tf.Session() as sess:
        sess.run(v.initializer)
        for expected in (0.0, 0.0, 3.0, 6.0):
            if expected:
                sess.run(step)
            assert sess.run(read, {x: ones}) == expected
        trainer = threading.Thread(target=lambda: [sess.run(step) for _ in range(200)])
        trainer.start()
        seen = [sess.run(read, {x: ones}) for _ in range(200)]
        trainer.join()
        assert seen == sorted(seen) and all(s % 3 == 0 for s in seen)
        assert sess.run(read, {x: ones}) == 3.0 * 202


def test_constant_fetches_are_folded_without_xla():
    with tf.Session() as sess:
        got = sess.run(tf.constant([1.0, 2.0]) * 2.0 + 1.0)
        np.testing.assert_array_equal(got, [3.0, 5.0])
        assert sess.compile_stats.executables == 0
        got[0] = 100.0  # results are copies: mutating one does not change later runs
        np.testing.assert_array_equal(sess.run(tf.get_default_graph()
                                               .get_tensor_by_name("add:0")), [3.0, 5.0])


def test_common_subexpressions_are_computed_once():
    x = tf.placeholder(tf.float32, [3])
    a = tf.sin(x)
    b = tf.sin(x)
    with tf.Session() as sess:
        va, vb = sess.run([a * 2.0, b * 2.0], {x: np.ones(3, np.float32)})
        np.testing.assert_array_equal(va, vb)
        (run,) = sess._runs.values()
        types = [op.type for op in run.executable.traced_ops]
        assert types.count("Sin") == 1 and types.count("Mul") == 1


def test_results_have_tf_dtypes():
    with tf.Session() as sess:
        for dtype in (tf.int8, tf.uint16, tf.int64, tf.float16, tf.float64, tf.bool):
            p = tf.placeholder(dtype, [2])
            got = sess.run(tf.identity(p), {p: np.zeros(2)})
            assert got.dtype == dtype.as_numpy_dtype


def test_make_callable():
    x = tf.placeholder(tf.float32, [2])
    y = x + 1.0
    with tf.Session() as sess:
        fn = sess.make_callable(y, [x])
        np.testing.assert_array_equal(fn(np.array([1, 2], np.float32)), [2, 3])


def test_placeholder_with_default():
    d = tf.placeholder_with_default(tf.constant([1.0, 2.0]), shape=[None])
    y = d * 2.0
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y), [2.0, 4.0])
        np.testing.assert_array_equal(sess.run(y, {d: [5.0]}), [10.0])


def test_string_feed_and_fetch():
    s = tf.placeholder(tf.string, [None])
    with tf.Session() as sess:
        got = sess.run(s, {s: ["a", "bc"]})
    assert list(got) == [b"a", b"bc"]


def test_errors_module_codes():
    assert tf.errors.NotFoundError(None, None, "x").error_code == tf.errors.NOT_FOUND
    assert tf.errors.exception_type_from_error_code(9) is tf.errors.FailedPreconditionError
    assert issubclass(tf.errors.OutOfRangeError, tf.errors.OpError)
    assert str(tf.errors.AbortedError(None, None, "boom")) == "boom"


def test_list_devices():
    with tf.Session() as sess:
        names = [d.name for d in sess.list_devices()]
    assert any(n.endswith("device:CPU:0") for n in names)


def test_config_proto_accepted():
    config = tf.ConfigProto(allow_soft_placement=True, log_device_placement=False,
                            gpu_options=tf.GPUOptions(allow_growth=True))
    with tf.Session(config=config) as sess:
        assert sess.run(tf.constant(1)) == 1
    with pytest.raises(ValueError, match=r"has no \"not_a_field\" field"):  # TF's words
        tf.ConfigProto(not_a_field=1)
