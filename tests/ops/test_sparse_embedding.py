"""tf.nn.embedding_lookup_sparse / safe_embedding_lookup_sparse beyond
test_sparse_features.py: a training step that must not compile again when batches hold
different numbers of distinct ids, and the safe form's pruning, default_id, ranks, dtypes
and gradients against NumPy written here (TF 1.15's rules: invalid ids and, unless
combining by "sum", non-positive weights are dropped; rows left empty get default_id at
weight 1, or zeros).
"""

import numpy as np
import pytest

import tensorflux as tf
from tests.ops.harness import numeric_gradient

InvalidArgumentError = tf.errors.InvalidArgumentError

RNG = np.random.default_rng(20)
VOCAB, DIM = 10, 3
PARAMS = RNG.uniform(-1, 1, (VOCAB, DIM))


def combine_rows(params, rows, combiner, default=None):
    """TF1's per-row combination in NumPy. `rows`: per row a list of (id, weight) after
    pruning; empty rows give params[default] (weight 1) or zeros."""
    out = np.zeros((len(rows), params.shape[1]))
    for r, entries in enumerate(rows):
        if not entries:
            if default is not None:
                out[r] = params[default]
            continue
        w = np.array([wt for _, wt in entries], np.float64)
        total = (w[:, None] * params[[i for i, _ in entries]]).sum(axis=0)
        norm = {"sum": 1.0, "mean": w.sum(), "sqrtn": np.sqrt((w ** 2).sum())}[combiner]
        out[r] = total / norm
    return out


def safe_rows(indices, ids, weights, shape, combiner):
    """The safe form's rows of (id, weight): ids flattened to [prod(shape[:-1]), last]
    row-major, invalid ids and (unless "sum") non-positive weights dropped."""
    rows = [[] for _ in range(int(np.prod(shape[:-1])))]
    for k, index in enumerate(indices):
        w = 1.0 if weights is None else weights[k]
        if ids[k] < 0 or (weights is not None and combiner != "sum" and w <= 0):
            continue
        rows[int(np.ravel_multi_index(tuple(index[:-1]), shape[:-1]))].append((ids[k], w))
    return rows


def combine_grad(rows, combiner, coef, default=None):
    """Gradient of sum(coef * combine_rows(params, rows, ...)) with respect to params (the
    lookups are linear in params)."""
    g = np.zeros((VOCAB, DIM))
    for r, entries in enumerate(rows):
        if not entries:
            if default is not None:
                g[default] += coef[r]
            continue
        w = np.array([wt for _, wt in entries], np.float64)
        norm = {"sum": 1.0, "mean": w.sum(), "sqrtn": np.sqrt((w ** 2).sum())}[combiner]
        for (i, _), wt in zip(entries, w):
            g[i] += coef[r] * wt / norm
    return g


def _batch(rng, distinct):
    """4 examples x 3 ids (fixed nnz) drawn from `distinct` ids; weights in (0.5, 2)."""
    pool = rng.choice(VOCAB, distinct, replace=False)
    ids = rng.choice(pool, 12)
    ids[:distinct] = pool  # exactly `distinct` different ids
    indices = np.stack(np.meshgrid(np.arange(4), np.arange(3), indexing="ij"), -1)
    return indices.reshape(-1, 2).astype(np.int64), ids.astype(np.int64), \
        rng.uniform(0.5, 2, 12)


def test_training_step_compiles_once_for_any_number_of_distinct_ids():
    # Fed SparseTensors without a static shape (the hard case: dense_shape is data too),
    # small enough that compiling fed integers in as constants would show up as traces.
    sp_ids = tf.sparse_placeholder(tf.int64)
    safe_ids = tf.sparse_placeholder(tf.int64)  # with invalid ids (-1), pruned
    sp_weights = tf.sparse_placeholder(tf.float64)
    table = tf.Variable(PARAMS, name="table")
    c1, c2 = RNG.normal(size=(4, DIM)), RNG.normal(size=(4, DIM))
    mean = tf.nn.embedding_lookup_sparse(table, sp_ids, None, combiner="mean")
    safe = tf.nn.safe_embedding_lookup_sparse(table, safe_ids, sp_weights, combiner="sqrtn",
                                              default_id=2)
    assert mean.shape.as_list() == [None, DIM]  # TF's: rows known only from the data
    loss = tf.reduce_sum(c1 * mean) + tf.reduce_sum(c2 * safe)
    grad = tf.gradients(loss, table)[0]
    assert isinstance(grad, tf.IndexedSlices)
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    rng = np.random.default_rng(1)
    want_table = PARAMS.copy()

    def feed_and_rows(indices, ids, weights, n=12):
        pruned = ids.copy()
        pruned[rng.random(len(ids)) < 0.3] = -1
        pruned[3:6] = -1  # example 1 left empty: default_id
        feed = {sp_ids: tf.SparseTensorValue(indices[:n], ids[:n], [4, 3]),
                safe_ids: tf.SparseTensorValue(indices[:n], pruned[:n], [4, 3]),
                sp_weights: tf.SparseTensorValue(indices[:n], weights[:n], [4, 3])}
        rows = [[(ids[k], 1.0) for k in range(n) if indices[k, 0] == r]
                for r in range(indices[n - 1, 0] + 1)]
        return feed, rows, safe_rows(indices[:n], pruned[:n], weights[:n], [4, 3], "sqrtn")

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        traces = None
        for step, distinct in enumerate([5, 9, 2, 7, 1, 4]):
            feed, rows, rows_safe = feed_and_rows(*_batch(rng, distinct))
            if step == 2:  # after the first batches every step reuses the executables
                traces = sess.compile_stats.traces
            got_mean, got_safe, _ = sess.run([mean, safe, train], feed)
            np.testing.assert_allclose(got_mean, combine_rows(want_table, rows, "mean"),
                                       rtol=1e-12)
            np.testing.assert_allclose(
                got_safe, combine_rows(want_table, rows_safe, "sqrtn", 2), rtol=1e-12)
            want_table -= 0.5 * (combine_grad(rows, "mean", c1)
                                 + combine_grad(rows_safe, "sqrtn", c2, 2))
        assert sess.compile_stats.traces == traces
        np.testing.assert_allclose(sess.run(table), want_table, rtol=1e-12)
        # A batch whose last example has no ids has fewer rows (TF's segment rule): that
        # row count compiles once more, and values stay right.
        feed, rows, rows_safe = feed_and_rows(*_batch(rng, 6), n=9)
        got_mean, got_safe = sess.run([mean, safe], feed)
        assert got_mean.shape == (3, DIM) and got_safe.shape == (4, DIM)
        np.testing.assert_allclose(got_mean, combine_rows(want_table, rows, "mean"),
                                   rtol=1e-12)
        np.testing.assert_allclose(got_safe, combine_rows(want_table, rows_safe, "sqrtn", 2),
                                   rtol=1e-12)
        np.testing.assert_allclose(got_safe[3], want_table[2], rtol=1e-12)  # default_id


def test_safe_lookup_combiners_ranks_and_dtypes():
    # 3-D ids [2, 3, 2] with invalid ids, zero/negative weights and empty rows.
    shape = [2, 3, 2]
    indices = np.array([[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 2, 1], [1, 0, 0], [1, 0, 1],
                        [1, 2, 0], [1, 2, 1]], np.int64)
    ids = np.array([3, -1, 7, 0, 9, 4, 5, 5], np.int64)
    weights = np.array([1.5, 2.0, 0.0, 0.5, -1.0, 2.5, 1.0, 3.0])
    sp_ids = tf.SparseTensor(indices, ids, shape)
    sp_weights = tf.SparseTensor(indices, weights, shape)
    fed_ids = tf.sparse_placeholder(tf.int64)  # rank unknown until run
    params = tf.constant(PARAMS)
    parts = [tf.constant(PARAMS[:4]), tf.constant(PARAMS[4:7]), tf.constant(PARAMS[7:])]
    mod_parts = [tf.constant(PARAMS[k::3]) for k in range(3)]
    fetches, want = {}, {}
    for combiner in ("sum", "mean", "sqrtn"):
        rows = safe_rows(indices, ids, weights, shape, combiner)
        for default in (None, 1):
            key = f"{combiner}_{default}"
            fetches[key] = tf.nn.safe_embedding_lookup_sparse(
                parts, sp_ids, sp_weights, combiner=combiner, default_id=default)
            want[key] = combine_rows(PARAMS, rows, combiner, default)
        unweighted = safe_rows(indices, ids, None, shape, combiner)
        fetches["unweighted_" + combiner] = tf.nn.safe_embedding_lookup_sparse(
            mod_parts, sp_ids, None, combiner=combiner, partition_strategy="mod")
        want["unweighted_" + combiner] = combine_rows(PARAMS, unweighted, combiner)
    fetches["fed"] = tf.nn.safe_embedding_lookup_sparse(params, fed_ids, default_id=4)
    want["fed"] = combine_rows(PARAMS, safe_rows(indices, ids, None, shape, "mean"), "mean", 4)
    norms = np.linalg.norm(PARAMS, axis=1, keepdims=True)
    clipped = PARAMS * np.minimum(1, 0.75 / norms)
    fetches["max_norm"] = tf.nn.safe_embedding_lookup_sparse(params, sp_ids, sp_weights,
                                                             default_id=8, max_norm=0.75)
    want["max_norm"] = combine_rows(clipped, safe_rows(indices, ids, weights, shape, "mean"),
                                    "mean", 8)
    # float16 tables are combined in float32, as TF.
    half = tf.nn.safe_embedding_lookup_sparse(tf.constant(PARAMS, tf.float16), sp_ids, None,
                                              combiner="sum")
    assert half.dtype == tf.float32
    assert fetches["sum_None"].shape.as_list() == [2, 3, 3]
    assert fetches["fed"].shape.ndims is None  # TF: unknown rank of ids, unknown rank
    with tf.Session() as sess:
        got, got_half = sess.run([fetches, half],
                                 {fed_ids: tf.SparseTensorValue(indices, ids, shape)})
    for key, value in want.items():
        np.testing.assert_allclose(got[key], value.reshape(2, 3, DIM), rtol=1e-12,
                                   err_msg=key)
    want_half = combine_rows(PARAMS.astype(np.float16).astype(np.float64),
                             safe_rows(indices, ids, None, shape, "sum"), "sum")
    np.testing.assert_allclose(got_half, want_half.reshape(2, 3, DIM), rtol=1e-3)


def test_safe_lookup_gradients_against_finite_differences():
    shape = [3, 3]
    indices = np.array([[0, 0], [0, 1], [0, 2], [2, 0], [2, 2]], np.int64)
    ids = np.array([4, -1, 4, 7, 1], np.int64)
    weights = np.array([0.5, 1.0, 2.0, -1.0, 1.5])
    sp_ids = tf.SparseTensor(indices, ids, shape)
    sp_weights = tf.SparseTensor(indices, weights, shape)
    table = tf.placeholder(tf.float64, [VOCAB, DIM])
    w_out = RNG.uniform(0.5, 1.5, (3, DIM))
    cases = {}
    for combiner, default in (("mean", 6), ("sqrtn", None)):
        out = tf.nn.safe_embedding_lookup_sparse(table, sp_ids, sp_weights, combiner=combiner,
                                                 default_id=default)
        grad = tf.gradients(tf.reduce_sum(w_out * out), table)[0]
        assert isinstance(grad, tf.IndexedSlices)
        cases[(combiner, default)] = tf.convert_to_tensor(grad)
    with tf.Session() as sess:
        got = sess.run(cases, {table: PARAMS})
    for (combiner, default), value in got.items():
        rows = safe_rows(indices, ids, weights, shape, combiner)
        want = numeric_gradient(
            lambda p: float((w_out * combine_rows(p, rows, combiner, default)).sum()),
            [PARAMS.copy()], 0)
        np.testing.assert_allclose(value, want, rtol=1e-6, atol=1e-8)
        assert np.all(np.isfinite(value))


def test_lookup_sparse_errors():
    params = tf.constant(PARAMS)
    unsorted = tf.SparseTensor([[1, 0], [0, 1]], tf.constant([1, 2], tf.int64), [2, 2])
    with tf.Session() as sess:
        with pytest.raises(InvalidArgumentError, match="segment ids are not increasing"):
            sess.run(tf.nn.embedding_lookup_sparse(params, unsorted, None, combiner="sum"))
        # The safe form flattens and refills rows, so TF accepts any order there.
        got = sess.run(tf.nn.safe_embedding_lookup_sparse(params, unsorted, None))
    np.testing.assert_allclose(got, PARAMS[[2, 1]], rtol=1e-12)
    with pytest.raises(ValueError, match="Missing embedding_weights"):
        tf.nn.safe_embedding_lookup_sparse([], unsorted)
    with pytest.raises(TypeError, match="sp_weights must be either None or SparseTensor"):
        tf.nn.embedding_lookup_sparse(params, unsorted, [1.0, 2.0])
