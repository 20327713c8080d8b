"""tf.TensorArray: values against NumPy, gradients against finite differences, TF's
errors, and arrays carried by tf.while_loop (fixed, dynamic, unknown trip counts)."""

import numpy as np
import pytest

import tensorflux as tf


def numeric_grad(f, x, eps=1e-6):
    g = np.zeros_like(x, dtype=np.float64)
    for i in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[i] += eps
        lo[i] -= eps
        g[i] = (f(hi) - f(lo)) / (2 * eps)
    return g


# -- outside loops --------------------------------------------------------------------------

def test_write_read_stack_gather_size_and_names():
    ta = tf.TensorArray(tf.float32, size=3, tensor_array_name="foo")
    assert ta.handle.op.type == "TensorArrayV3" and ta.handle.op.name == "TensorArray"
    assert ta.flow.dtype == tf.float32 and ta.flow.shape == tf.TensorShape([])
    assert ta.dtype == tf.float32 and not ta.dynamic_size
    assert ta.element_shape == tf.TensorShape(None)
    w = ta.write(0, [1.0, 2.0]).write(1, [3.0, 4.0]).write(2, [5.0, 6.0])
    assert w.handle is ta.handle and w.flow.op.type == "TensorArrayWriteV3"
    assert w.flow.op.name == "TensorArrayWrite_2/TensorArrayWriteV3"
    assert ta.element_shape == tf.TensorShape([2])  # inferred from the writes, shared
    r = w.read(1)
    s = w.stack()
    g = w.gather([2, 0])
    assert r.shape == tf.TensorShape([2]) and s.shape == tf.TensorShape([3, 2])
    assert s.op.type == "TensorArrayGatherV3" and g.shape.as_list() == [None, 2]
    with tf.Session() as sess:
        rv, sv, gv, size, flow = sess.run([r, s, g, w.size(), w.flow])
    np.testing.assert_array_equal(rv, [3, 4])
    np.testing.assert_array_equal(sv, [[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(gv, [[5, 6], [1, 2]])
    assert size == 3 and flow == 0.0  # a flow fetches as TF's float scalar


def test_unstack_scatter_concat_split_identity_and_fed_values():
    x = tf.placeholder(tf.int32, [None, 2])
    ta = tf.TensorArray(tf.int32, size=tf.shape(x)[0]).unstack(x)
    sc = tf.TensorArray(tf.int32, size=4).scatter([3, 0, 2, 1], x)
    cat = tf.TensorArray(tf.float32, size=3).split(tf.range(12.0), [4, 4, 4])
    assert cat.element_shape == tf.TensorShape([4])
    ident = sc.identity()
    xv = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.int32)
    with tf.Session() as sess:
        out = sess.run([ta.read(2), ta.stack(), ident.stack(), cat.concat(), cat.read(1)],
                       {x: xv})
    np.testing.assert_array_equal(out[0], [5, 6])
    np.testing.assert_array_equal(out[1], xv)
    np.testing.assert_array_equal(out[2], xv[[1, 3, 2, 0]])
    np.testing.assert_array_equal(out[3], np.arange(12.0))
    np.testing.assert_array_equal(out[4], [4, 5, 6, 7])


def test_dynamic_size_grows_and_unwritten_elements_read_as_zeros():
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, clear_after_read=False)
    ta = ta.write(0, [10.0]).write(1, [20.0]).write(5, [30.0])
    known = tf.TensorArray(tf.float32, size=2, element_shape=[3])
    with tf.Session() as sess:
        stacked, size, zeros = sess.run([ta.stack(), ta.size(), known.read(1)])
    np.testing.assert_array_equal(stacked, [[10], [20], [0], [0], [0], [30]])
    assert size == 6
    np.testing.assert_array_equal(zeros, [0, 0, 0])


def test_gradients_outside_loops_match_finite_differences():
    x = tf.placeholder(tf.float64, [3, 2])
    ta = tf.TensorArray(tf.float64, size=3, clear_after_read=False).unstack(x * x)
    two = tf.TensorArray(tf.float64, size=2).write(0, x[0]).write(1, x[1] * 3.0)
    cat = tf.TensorArray(tf.float64, size=3).split(tf.reshape(x, [6]), [2, 2, 2])
    # A read twice (gradients add up), a gather, a stack of writes, a concat of a split.
    y = (tf.reduce_sum(ta.read(1) * ta.read(1)) + tf.reduce_sum(ta.gather([2, 0]) * 0.5)
         + tf.reduce_sum(tf.sin(two.stack())) + tf.reduce_sum(cat.concat() ** 3))
    grad = tf.gradients(y, x)[0]
    xv = np.array([[0.3, -0.7], [1.1, 0.4], [-0.2, 0.9]])
    with tf.Session() as sess:
        got = sess.run(grad, {x: xv})
        expected = numeric_grad(lambda v: sess.run(y, {x: v}), xv)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


def test_gradient_array_ops_and_types():
    x = tf.constant([1.0, 2.0])
    ta = tf.TensorArray(tf.float32, size=1).write(0, x)
    y = ta.read(0) * 2.0
    tf.gradients(y, x)
    types = {op.type for op in tf.get_default_graph().get_operations()}
    assert {"TensorArrayGradV3", "TensorArrayWriteV3", "TensorArrayReadV3"} <= types
    g = ta.grad("gradients")
    assert g.handle.op.type == "TensorArrayGradV3" and g.flow.op.name.endswith(
        "gradient_flow")
    assert ta.close().type == "TensorArrayCloseV3"


def test_cond_returns_tensor_arrays():
    p = tf.placeholder(tf.bool, [])
    ta = tf.TensorArray(tf.float32, size=2)
    out = tf.cond(p, lambda: ta.write(0, 1.0).write(1, 2.0),
                  lambda: ta.write(0, -1.0).write(1, -2.0))
    assert isinstance(out, tf.TensorArray) and out.handle is ta.handle
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(out.stack(), {p: True}), [1, 2])
        np.testing.assert_array_equal(sess.run(out.stack(), {p: False}), [-1, -2])


# -- in while loops -------------------------------------------------------------------------

def test_dynamic_rnn_style_loop_values_and_gradient():
    """Inputs unstacked into one array, outputs written into another: one compiled loop,
    differentiated through the arrays."""
    x = tf.placeholder(tf.float64, [None, 3])
    w = tf.placeholder(tf.float64, [3, 3])
    n = tf.shape(x)[0]
    inputs = tf.TensorArray(tf.float64, size=n).unstack(x)

    def body(t, h, out):
        h = tf.tanh(tf.matmul(h[None], w)[0] + inputs.read(t))
        return t + 1, h, out.write(t, h)

    _, h, out = tf.while_loop(lambda t, h, o: t < n, body,
                              [0, tf.zeros([3], tf.float64), tf.TensorArray(tf.float64, n)])
    ys = out.stack()
    loss = tf.reduce_sum(ys ** 2) + tf.reduce_sum(h)
    gx, gw = tf.gradients(loss, [x, w])
    rng = np.random.RandomState(0)
    xv, wv = rng.randn(5, 3) * 0.5, rng.randn(3, 3) * 0.5

    def reference(xv, wv):
        h, ys = np.zeros(3), []
        for row in xv:
            h = np.tanh(h @ wv + row)
            ys.append(h)
        return np.array(ys), h

    with tf.Session() as sess:
        yv, gxv, gwv = sess.run([ys, gx, gw], {x: xv, w: wv})
        np.testing.assert_allclose(yv, reference(xv, wv)[0], rtol=1e-12)
        f = lambda a, b: sess.run(loss, {x: a, w: b})
        np.testing.assert_allclose(gxv, numeric_grad(lambda v: f(v, wv), xv), rtol=1e-5)
        np.testing.assert_allclose(gwv, numeric_grad(lambda v: f(xv, v), wv), rtol=1e-5)


def test_dynamic_array_in_loops_of_static_fed_and_unknown_trip_counts():
    limit = tf.placeholder(tf.int32, [])

    def fill(cond, **kw):
        ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
        _, ta = tf.while_loop(cond, lambda i, t: (i + 1, t.write(i, i * i)), [0, ta], **kw)
        return ta.stack()

    static = fill(lambda i, t: i < 5)
    capped = fill(lambda i, t: i < limit, maximum_iterations=3)
    unknown = fill(lambda i, t: i * i < limit)  # data-dependent: no bound before the run
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(static), [0, 1, 4, 9, 16])
        np.testing.assert_array_equal(sess.run(capped, {limit: 10}), [0, 1, 4])
        for lim in (10, 5000, 2):  # 71 iterations outgrow the first compiled room
            n = int(np.ceil(np.sqrt(lim)))
            np.testing.assert_array_equal(sess.run(unknown, {limit: lim}),
                                          np.arange(n) ** 2)


def test_gradient_through_a_loop_of_unknown_trip_count_carrying_arrays():
    """Reverse mode needs a bounded loop: one carrying arrays gets a compiled iteration
    cap that grows when a run needs more."""
    x = tf.placeholder(tf.float64, [])
    steps = tf.placeholder(tf.int32, [])
    ta = tf.TensorArray(tf.float64, size=0, dynamic_size=True)
    _, _, ta = tf.while_loop(lambda i, v, t: i < steps,
                             lambda i, v, t: (i + 1, v * x, t.write(i, v * x)),
                             [0, tf.constant(1.0, tf.float64), ta])
    total = tf.reduce_sum(ta.stack())  # x + x^2 + ... + x^n
    grad = tf.gradients(total, x)[0]
    with tf.Session() as sess:
        for n in (4, 40):
            v, g = sess.run([total, grad], {x: 0.9, steps: n})
            k = np.arange(1, n + 1)
            np.testing.assert_allclose(v, np.sum(0.9 ** k), rtol=1e-12)
            np.testing.assert_allclose(g, np.sum(k * 0.9 ** (k - 1)), rtol=1e-12)


# -- errors ---------------------------------------------------------------------------------

def test_runtime_errors_are_tfs():
    ta = tf.TensorArray(tf.float32, size=2, tensor_array_name="foo")
    twice = ta.write(0, 1.0).write(0, 2.0).stack()
    past = ta.write(2, 1.0).flow
    read_past = ta.write(0, 1.0).write(1, 1.0).read(3)
    unknown = tf.TensorArray(tf.float32, size=2).read(0)
    empty = tf.TensorArray(tf.float32, size=0).stack()
    i = tf.placeholder(tf.int32, [])
    fed_twice = ta.write(i, 1.0).write(1, 2.0).stack()
    wrong_dtype = tf.TensorArray(tf.float32, size=1).write(0, tf.constant(1, tf.int32)).flow
    with tf.Session() as sess:
        cases = [
            (twice, None, "TensorArray foo: Could not write to TensorArray index 0 because it "
                          "has already been written to."),
            (past, None, "TensorArray foo: Tried to write to index 2 but array is not "
                         "resizeable and size is: 2"),
            (read_past, None, "Tried to read from index 3 but array size is: 2"),
            (unknown, None, "Could not read from TensorArray index 0.  Furthermore, the "
                            "element shape is not fully defined: <unknown>"),
            (fed_twice, {i: 1}, "Could not write to TensorArray index 1 because it has "
                                "already been written to."),
            (wrong_dtype, None, "TensorArray dtype is float but Op is trying to write dtype "
                                "int32."),
        ]
        for fetch, feed, message in cases:
            with pytest.raises(tf.errors.InvalidArgumentError, match=message.replace(
                    ".", r"\.").replace("[", r"\[")):
                sess.run(fetch, feed)
        with pytest.raises(tf.errors.UnimplementedError, match="TensorArray has size zero, "
                           "but element shape <unknown> is not fully defined"):
            sess.run(empty)
        np.testing.assert_array_equal(sess.run(fed_twice, {i: 0}), [1, 2])


def test_construction_errors():
    with pytest.raises(ValueError, match="Size must be provided if handle is not provided"):
        tf.TensorArray(tf.float32)
    ta = tf.TensorArray(tf.float32, size=2)
    with pytest.raises(ValueError, match="Cannot provide both a handle and size"):
        tf.TensorArray(tf.float32, size=2, handle=ta.handle, flow=ta.flow)
    with pytest.raises(ValueError, match="flow must not be None if handle is not None"):
        tf.TensorArray(tf.float32, handle=ta.handle)
    with pytest.raises(TypeError, match="Handle must be a Tensor"):
        tf.TensorArray(tf.float32, handle=3, flow=ta.flow)
    ta.write(0, [1.0, 2.0])
    with pytest.raises(ValueError, match=r"Inconsistent shapes: saw \(3,\) but expected "
                                         r"\(2,\)"):
        ta.write(1, [1.0, 2.0, 3.0])


def test_tensor_array_spec():
    ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[2])
    spec = tf.type_spec_from_value(ta)
    assert isinstance(spec, tf.TensorArraySpec) and spec.value_type is tf.TensorArray
    assert spec == tf.TensorArraySpec([2], tf.int32, dynamic_size=True)
    assert spec.is_compatible_with(tf.TensorArraySpec([None], tf.int32, True, False))
    assert not spec.is_compatible_with(tf.TensorArraySpec([2], tf.int32, False))
    assert not spec.is_compatible_with(tf.TensorSpec([2], tf.int32))
    merged = spec.most_specific_compatible_type(tf.TensorArraySpec([None], tf.int32, True))
    assert merged == tf.TensorArraySpec([None], tf.int32, True)
    with pytest.raises(ValueError, match="Types are not compatible"):
        spec.most_specific_compatible_type(tf.TensorArraySpec([2], tf.float32, True))
    assert spec._to_legacy_output_shapes().as_list() == [1, 1, 2]
