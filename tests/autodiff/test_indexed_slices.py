"""tf.IndexedSlices: the class, fetching and feeding, densifying (and its warning), the
sparse gradients of gather and embedding_lookup against finite differences, how
tf.gradients aggregates them, and the clipping functions on them."""

import warnings

import numpy as np
import pytest

import tensorflux as tf

RNG = np.random.default_rng(0)


def dense_of(value, rows):
    """The dense array an IndexedSlicesValue stands for (repeated indices add up)."""
    out = np.zeros((rows,) + value.values.shape[1:], value.values.dtype)
    np.add.at(out, value.indices, value.values)
    return out


def finite_difference(loss_fn, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (loss_fn(x + step) - loss_fn(x - step)) / (2 * eps)
    return grad


def test_the_class_and_its_properties():
    values = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="vals")
    indices = tf.constant([2, 0], name="idx")
    dense_shape = tf.constant([3, 2], name="shape")
    s = tf.IndexedSlices(values, indices, dense_shape)
    assert (s.values, s.indices, s.dense_shape) == (values, indices, dense_shape)
    assert s.name == "vals:0" and s.op is values.op and s.dtype == tf.float32
    assert s.graph is values.graph and s.device == values.device
    assert s.shape.as_list() == [3, 2]
    assert tf.IndexedSlices(values, indices).shape.ndims is None
    fed = tf.placeholder(tf.int32, [2])
    assert tf.IndexedSlices(values, indices, fed).shape.as_list() == [None, None]
    assert str(s) == (f"IndexedSlices(indices={indices}, values={values}, "
                      f"dense_shape={dense_shape})")
    assert str(tf.IndexedSlices(values, indices)) == \
        f"IndexedSlices(indices={indices}, values={values})"
    doubled = values * 2
    assert s.consumers() == [doubled.op]
    neg = -s
    assert isinstance(neg, tf.IndexedSlices) and neg.indices is indices
    assert tf.convert_to_tensor_or_indexed_slices(s) is s
    with pytest.raises(ValueError, match="Tensor conversion requested dtype int32 for Tensor "
                                         "with dtype float32"):
        tf.convert_to_tensor_or_indexed_slices(s, dtype=tf.int32)
    t = tf.convert_to_tensor_or_indexed_slices([1, 2])
    assert isinstance(t, tf.Tensor) and t.dtype == tf.int32
    with tf.Session() as sess:
        got = sess.run({"s": s, "neg": neg, "no_shape": tf.IndexedSlices(values, indices)})
    assert isinstance(got["s"], tf.IndexedSlicesValue)
    np.testing.assert_array_equal(got["s"].values, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(got["s"].indices, [2, 0])
    np.testing.assert_array_equal(got["s"].dense_shape, [3, 2])
    np.testing.assert_array_equal(got["neg"].values, [[-1, -2], [-3, -4]])
    assert got["no_shape"].dense_shape is None


def test_feeding_an_indexed_slices():
    s = tf.IndexedSlices(tf.placeholder(tf.float32, [None, 2]), tf.placeholder(tf.int64, [None]),
                         tf.placeholder(tf.int64, [2]))
    total = tf.reduce_sum(s.values) + tf.cast(tf.reduce_sum(s.indices), tf.float32)
    with tf.Session() as sess:
        value = tf.IndexedSlicesValue(np.ones((3, 2), np.float32), np.array([0, 4, 1]),
                                      np.array([5, 2]))
        assert sess.run(total, {s: value}) == 11.0


def test_densifying_and_its_warnings():
    values = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    indices = tf.constant([3, 0, 3])
    known = tf.IndexedSlices(values, indices, tf.constant([4, 2]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a small known shape converts silently
        dense = tf.convert_to_tensor(known)
    assert dense.shape.as_list() == [4, 2] and dense.op.type == "UnsortedSegmentSum"
    unknown = tf.IndexedSlices(values, indices, tf.placeholder(tf.int32, [2], name="ds"))
    with pytest.warns(UserWarning, match="Converting sparse IndexedSlices to a dense Tensor of "
                                         "unknown shape. This may consume a large amount of "
                                         "memory."):
        dense_unknown = tf.convert_to_tensor(unknown)
    large = tf.IndexedSlices(values, indices, tf.constant([100000000, 2]))
    with pytest.warns(UserWarning, match="Converting sparse IndexedSlices to a dense Tensor "
                                         "with 200000000 elements. This may consume a large "
                                         "amount of memory."):
        tf.convert_to_tensor(large)  # built, never run
    with pytest.raises(ValueError, match="Tensor conversion requested dtype int32 for "
                                         "IndexedSlices with dtype float32"):
        tf.convert_to_tensor(known, dtype=tf.int32)
    with pytest.raises(ValueError, match="Tensor conversion requested for IndexedSlices "
                                         "without dense_shape"):
        tf.convert_to_tensor(tf.IndexedSlices(values, indices))
    expected = np.array([[3, 4], [0, 0], [0, 0], [6, 8]], np.float32)
    with tf.Session() as sess:
        a, b, c = sess.run([dense, dense_unknown, known.values * 1 + tf.zeros([3, 2])],
                           {"ds:0": [4, 2]})
    np.testing.assert_array_equal(a, expected)
    np.testing.assert_array_equal(b, expected)
    np.testing.assert_array_equal(c, [[1, 2], [3, 4], [5, 6]])


def test_gather_and_embedding_gradients_against_finite_differences():
    params0 = RNG.normal(size=(5, 3))
    ids = np.array([4, 1, 4, 0])
    coeffs = RNG.normal(size=(4, 3))
    p = tf.placeholder(tf.float64, [5, 3])
    parts = [tf.placeholder(tf.float64, [3, 3]), tf.placeholder(tf.float64, [2, 3])]
    gathered = tf.gather(p, ids)
    loss = tf.reduce_sum(tf.sin(gathered) * coeffs)
    loss_emb = tf.reduce_sum(tf.sin(tf.nn.embedding_lookup(p, ids)) * coeffs)
    # a table in two partitions ("mod": id i is row i // 2 of partition i % 2)
    loss_parts = tf.reduce_sum(tf.sin(tf.nn.embedding_lookup(parts, ids)) * coeffs)
    loss_axis1 = tf.reduce_sum(tf.sin(tf.gather(p, [2, 0, 2], axis=1))
                               * RNG.normal(size=(5, 3)))
    g = tf.gradients(loss, p)[0]
    g_emb = tf.gradients(loss_emb, p)[0]
    g_axis1 = tf.gradients(loss_axis1, p)[0]
    g_parts = tf.gradients(loss_parts, parts)
    assert isinstance(g, tf.IndexedSlices) and isinstance(g_emb, tf.IndexedSlices)
    assert g.indices.dtype == tf.int64 and g.dense_shape.dtype == tf.int32
    assert g.values.shape.as_list() == [4, 3] and g.shape.as_list() == [5, 3]
    assert isinstance(g_axis1, tf.Tensor)  # along another axis the gradient is dense
    assert all(isinstance(x, tf.IndexedSlices) for x in g_parts)
    split = [params0[0::2], params0[1::2]]
    feed = {p: params0, parts[0]: split[0], parts[1]: split[1]}
    with tf.Session() as sess:
        gv, gev, ga1, gp = sess.run([g, g_emb, g_axis1, g_parts], feed)

        def run(tensor, x, key=p):
            return sess.run(tensor, {**feed, key: x})

        fd = finite_difference(lambda x: run(loss, x), params0)
        fd_axis1 = finite_difference(lambda x: run(loss_axis1, x), params0)
        fd_parts = [finite_difference(lambda x, k=k: run(loss_parts, x, parts[k]), split[k])
                    for k in range(2)]
    np.testing.assert_array_equal(gv.indices, ids)
    np.testing.assert_allclose(gv.values, np.cos(params0[ids]) * coeffs)
    np.testing.assert_allclose(dense_of(gv, 5), fd, atol=1e-7)
    np.testing.assert_allclose(dense_of(gev, 5), fd, atol=1e-7)
    np.testing.assert_allclose(ga1, fd_axis1, atol=1e-7)
    for k in range(2):
        np.testing.assert_allclose(dense_of(gp[k], len(split[k])), fd_parts[k], atol=1e-7)


def test_aggregation_concatenates_sparse_gradients_as_tf1():
    w = tf.Variable(np.arange(8.0).reshape(4, 2), name="w")
    a = tf.reduce_sum(tf.gather(w, [1, 3]))
    b = tf.reduce_sum(tf.gather(w, tf.constant([3], tf.int64)) * 2.0)
    dense_use = tf.reduce_sum(w * 10.0)
    both_sparse = tf.gradients(a + 3.0 * tf.reduce_sum(tf.gather(w, [0])), w)[0]
    mixed_ids = tf.gradients(a + b, w)[0]
    mixed_dense = tf.gradients(a + dense_use, w)[0]
    # IndexedSlices flow through Identity and Cast and stay sparse; Mul densifies.
    through_cast = tf.gradients(tf.reduce_sum(tf.gather(tf.cast(tf.identity(w), tf.float32),
                                                        [2])), w)[0]
    through_mul = tf.gradients(tf.reduce_sum(tf.gather(w * 2.0, [2])), w)[0]
    for g in (both_sparse, mixed_ids, mixed_dense, through_cast):
        assert isinstance(g, tf.IndexedSlices)
    assert isinstance(through_mul, tf.Tensor) and through_mul.dtype == tf.float64
    assert mixed_ids.indices.dtype == tf.int64  # int32 indices cast when mixed with int64
    assert through_cast.values.dtype == tf.float64
    with tf.Session() as sess:
        sess.run(w.initializer)
        got = sess.run([both_sparse, mixed_ids, mixed_dense, through_cast, through_mul])
    values = [sorted(zip(v.indices.tolist(), v.values.tolist())) for v in got[:4]]
    assert values[0] == [(0, [3.0, 3.0]), (1, [1.0, 1.0]), (3, [1.0, 1.0])]
    assert values[1] == [(1, [1.0, 1.0]), (3, [1.0, 1.0]), (3, [2.0, 2.0])]
    # the dense term joins as every row of itself (TF1's _as_indexed_slices)
    assert values[2] == sorted([(1, [1.0, 1.0]), (3, [1.0, 1.0])]
                               + [(i, [10.0, 10.0]) for i in range(4)])
    assert values[3] == [(2, [1.0, 1.0])]
    np.testing.assert_array_equal(got[4], [[0, 0], [0, 0], [2, 2], [0, 0]])


def test_clipping_indexed_slices_uses_their_values():
    vals = RNG.normal(size=(3, 2)).astype(np.float32)
    s = tf.IndexedSlices(tf.constant(vals), tf.constant([0, 2, 0]), tf.constant([4, 2]))
    d = tf.constant([[3.0, 4.0]])
    clipped = tf.clip_by_norm(s, 0.5)
    norm = tf.global_norm([s, None, d])
    listed, used = tf.clip_by_global_norm([s, None, d], 1.0)
    assert isinstance(clipped, tf.IndexedSlices) and clipped.indices is s.indices
    assert isinstance(listed[0], tf.IndexedSlices) and listed[1] is None
    with tf.Session() as sess:
        c, n, (l0, l2), u = sess.run([clipped, norm, [listed[0], listed[2]], used])
    values_norm = np.sqrt((vals ** 2).sum())
    expected_norm = np.sqrt(values_norm ** 2 + 25.0)  # of the values, not the dense sum
    np.testing.assert_allclose(c.values, vals * 0.5 / values_norm, rtol=1e-6)
    np.testing.assert_allclose(n, expected_norm, rtol=1e-6)
    np.testing.assert_allclose(u, expected_norm, rtol=1e-6)
    np.testing.assert_allclose(l0.values, vals / expected_norm, rtol=1e-6)
    np.testing.assert_array_equal(l0.indices, [0, 2, 0])
    np.testing.assert_allclose(l2, [[3.0, 4.0]] / expected_norm, rtol=1e-6)


def test_indexed_slices_spec():
    spec = tf.IndexedSlicesSpec([None, 3], tf.float32, tf.int32, tf.int64, [None])
    assert spec.value_type is tf.IndexedSlices
    assert spec.shape.as_list() == [None, 3] and spec.dtype == tf.float32
    assert spec == tf.IndexedSlicesSpec([None, 3], tf.float32, tf.int32, tf.int64, [None])
    assert spec != tf.IndexedSlicesSpec([None, 3], tf.float32, tf.int64, tf.int64, [None])
    s = tf.IndexedSlices(tf.zeros([2, 3]), tf.constant([0, 1]), tf.constant([5, 3], tf.int64))
    assert s._type_spec == tf.IndexedSlicesSpec([5, 3], tf.float32, tf.int32, tf.int64, [2])
    assert spec.is_compatible_with(s) and not spec.is_compatible_with(tf.TensorSpec([3]))
    assert [c.shape.as_list() for c in spec._component_specs] == [[None, 3], [None], [2]]
    assert tf.IndexedSlicesSpec().shape.ndims is None
    with pytest.raises(ValueError):
        tf.IndexedSlicesSpec(indices_shape=[2, 2])


def test_gradient_checker_on_a_sparse_gradient():
    x = tf.placeholder(tf.float64, [4, 2])
    y = tf.gather(x, [3, 0, 3]) * 2.0
    with tf.Session():
        theoretical, numeric = tf.test.compute_gradient(
            x, [4, 2], y, [3, 2], x_init_value=RNG.normal(size=(4, 2)))
    np.testing.assert_allclose(theoretical, numeric, atol=1e-6)
    assert theoretical[6, 0] == 2.0 and theoretical[6, 4] == 2.0  # x[3, 0] read twice


def test_grouping_gating_and_control_dependencies_take_indexed_slices():
    w = tf.Variable(np.ones((4, 2), np.float32), name="w")
    loss = tf.reduce_sum(tf.gather(w, [1, 1]))
    g = tf.gradients(loss, w)[0]
    gated = tf.tuple([g, None])
    assert isinstance(gated[0], tf.IndexedSlices) and gated[1] is None
    assert gated[0].indices is g.indices
    grouped = tf.group(g)
    assert {op.name for op in grouped.control_inputs} == {
        g.values.op.name, g.indices.op.name, g.dense_shape.op.name}
    with tf.control_dependencies([g]):
        after = tf.constant(1.0)
    assert after.op.control_inputs == [g.op]
    opt = tf.train.MomentumOptimizer(0.1, 0.9)
    train = opt.minimize(loss, gate_gradients=tf.train.Optimizer.GATE_GRAPH)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        np.testing.assert_allclose(sess.run(w), [[1, 1], [0.8, 0.8], [1, 1], [1, 1]])
