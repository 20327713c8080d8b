"""Serialized SparseTensors, sparse feature crosses (TF's golden FarmHash values), sparse
bincount, and the sparse embedding lookups against NumPy written here, with gradients to
the embedding parameters against finite differences.
"""

import collections

import numpy as np
import pytest

import tensorflux as tf
from tests.ops.harness import numeric_gradient
from tests.ops.test_sparse_ops import run

InvalidArgumentError = tf.errors.InvalidArgumentError


def test_serialize_round_trips():
    st = tf.SparseTensor([[0, 1], [1, 0], [1, 2]], [1.5, -2.0, 3.0], [3, 4])
    words = tf.SparseTensor([[0], [3]], ["a", "bcd"], [5])
    one = tf.serialize_sparse(st)
    many = tf.io.serialize_many_sparse(st)
    assert one.shape.as_list() == [3] and many.shape.as_list() == [None, 3]
    back = tf.deserialize_many_sparse(many, tf.float32, rank=2)
    assert back.indices.shape.as_list() == [None, 2]
    stacked = tf.io.deserialize_many_sparse(
        tf.stack([tf.serialize_sparse(words), tf.io.serialize_sparse(
            tf.SparseTensor([[1]], ["z"], [2]))]), tf.string)
    got_one, got_many, got_back, got_stacked = run([one, many, back, stacked])
    assert got_one.dtype == object and got_many.shape == (3, 2 + 1)
    for a, b in zip(got_back, run(st)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(got_stacked.indices, [[0, 0], [0, 3], [1, 1]])
    assert got_stacked.values.tolist() == [b"a", b"bcd", b"z"]
    np.testing.assert_array_equal(got_stacked.dense_shape, [2, 5])  # the largest per dim
    with pytest.raises(InvalidArgumentError, match="Requested SparseTensor of type int32 but "
                                                   r"SparseTensor\[0\].values.dtype\(\) == "
                                                   "float"):
        run(tf.deserialize_many_sparse(many, tf.int32))
    with pytest.raises(InvalidArgumentError, match="Rank of input SparseTensor should be > 1, "
                                                   "but saw rank: 1"):
        run(tf.serialize_many_sparse(words))


def sparse_rows(rows, batch=None, dtype=None):
    """TF's test helper: row b of the SparseTensor holds the features rows[b]."""
    indices = [[b, c] for b, row in enumerate(rows) for c in range(len(row))]
    values = [v for row in rows for v in row]
    width = max((len(r) for r in rows), default=0)
    dtype = dtype or (tf.string if not values or isinstance(values[0], str) else tf.int64)
    return tf.SparseTensor(tf.constant(indices, tf.int64, [len(indices), 2]),
                           tf.constant(values, dtype, [len(values)]),
                           tf.constant([len(rows) if batch is None else batch, width],
                                       tf.int64))


def test_sparse_cross_matches_tf_kernel_outputs():
    fc1 = sparse_rows([["b1-F1"], ["b2-F1", "b2-F2"]])
    fc2 = sparse_rows([["b1-G1"], ["b2-G1", "b2-G2"]])
    three = [sparse_rows([["batch1-FC1-F1"]]), sparse_rows([["batch1-FC2-F1"]]),
             sparse_rows([["batch1-FC3-F1"]])]
    default_key = 0xDECAFCAFFE
    fetches = [
        tf.sparse.cross([fc1, fc2]),
        tf.sparse.cross([sparse_rows([[11], [333, 55555]]), tf.constant([["x"], ["y"]])]),
        tf.sparse.cross([fc1, tf.constant([["d1", "d2"], ["e1", "e2"]])], separator="+"),
        tf.sparse.cross([sparse_rows([["a", "b"]], batch=2), sparse_rows([["c"], ["d"]])]),
        # TF's golden hashes (sparse_cross_op_test.py): FarmHash Fingerprint64 of each
        # feature folded with FingerprintCat64 from the hash key.
        tf.sparse.cross_hashed(three),
        tf.sparse.cross_hashed(three, hash_key=default_key + 1),
        tf.sparse.cross_hashed(three, num_buckets=100),
        tf.sparse.cross_hashed(three, num_buckets=100, hash_key=default_key + 1),
    ]
    got = run(fetches)
    assert got[0].values.tolist() == [b"b1-F1_X_b1-G1", b"b2-F1_X_b2-G1", b"b2-F1_X_b2-G2",
                                      b"b2-F2_X_b2-G1", b"b2-F2_X_b2-G2"]
    np.testing.assert_array_equal(got[0].indices, [[0, 0], [1, 0], [1, 1], [1, 2], [1, 3]])
    np.testing.assert_array_equal(got[0].dense_shape, [2, 4])
    assert got[1].values.tolist() == [b"11_X_x", b"333_X_y", b"55555_X_y"]
    assert got[2].values.tolist() == [b"b1-F1+d1", b"b1-F1+d2", b"b2-F1+e1", b"b2-F1+e2",
                                      b"b2-F2+e1", b"b2-F2+e2"]
    assert got[3].values.tolist() == [b"a_X_c", b"b_X_c"]  # row 1 has no "a" features
    np.testing.assert_array_equal(got[3].dense_shape, [2, 2])
    assert [g.values.tolist() for g in got[4:]] == [[1971693436396284976],
                                                     [4847552627144134031], [83], [31]]
    with pytest.raises(TypeError, match="Inputs must be a list"):
        tf.sparse.cross(fc1)
    with pytest.raises(InvalidArgumentError, match="Expected batch size 2 got 1 at position 1"):
        run(tf.sparse.cross([fc1, sparse_rows([["q"]])]))


def counts(rows, weights=None, minlength=0, maxlength=0, binary=False):
    """{(row, value): count or weight sum} of non-negative values under maxlength."""
    table = collections.defaultdict(float)
    for r, row in enumerate(rows):
        for c, v in enumerate(row):
            if v >= 0 and (maxlength <= 0 or v < maxlength):
                table[(r, v)] += 1 if weights is None or binary else weights[r][c]
    if binary:
        table = {k: 1 for k in table}
    return dict(table)


def as_table(value, batched=True):
    return {tuple(i) if batched else (0, i[0]): v
            for i, v in zip(value.indices.tolist(), value.values.tolist())}


def test_sparse_bincount_against_python():
    values = [[1, 2, 2, 7], [0, 5, -1, 1]]
    weights = [[0.5, 1.0, 2.0, 1.0], [3.0, 1.0, 1.0, 0.25]]
    st = tf.SparseTensor([[0, 0], [0, 3], [1, 1]], tf.constant([4, 4, 2], tf.int64), [2, 5])
    rt = tf.ragged.constant([[3, 3, 1], [], [2]])
    got = run([tf.sparse.bincount(values, axis=-1), tf.sparse.bincount(values),
               tf.sparse.bincount(values, weights=weights, axis=-1, minlength=10),
               tf.sparse.bincount(values, axis=-1, maxlength=3, binary_output=True),
               tf.sparse.bincount(st, axis=-1), tf.sparse.bincount(rt, axis=-1)])
    assert as_table(got[0]) == counts(values)
    np.testing.assert_array_equal(got[0].dense_shape, [2, 8])
    flat = counts([sum(values, [])])
    assert as_table(got[1], batched=False) == flat
    np.testing.assert_array_equal(got[1].dense_shape, [8])
    assert got[2].values.dtype == np.float32
    assert as_table(got[2]) == pytest.approx(counts(values, weights))
    np.testing.assert_array_equal(got[2].dense_shape, [2, 10])
    assert as_table(got[3]) == counts(values, maxlength=3, binary=True)
    np.testing.assert_array_equal(got[3].dense_shape, [2, 3])
    assert as_table(got[4]) == {(0, 4): 2, (1, 2): 1}
    assert as_table(got[5]) == {(0, 1): 1, (0, 3): 2, (2, 2): 1}
    np.testing.assert_array_equal(got[5].dense_shape, [3, 4])


PARAMS = np.random.default_rng(4).uniform(-1, 1, (6, 3))
IDS_IDX = [[0, 0], [0, 1], [0, 2], [2, 0], [3, 1]]
IDS = [1, 3, 1, 0, 5]
WEIGHTS = [0.5, 2.0, 1.0, 3.0, 0.25]


def lookup_expect(params, combiner, weights=None, rows=4):
    """TF1's embedding_lookup_sparse in NumPy: rows up to the last row with ids."""
    out = np.zeros((rows, params.shape[1]))
    for r in range(rows):
        mine = [k for k, (row, _) in enumerate(IDS_IDX) if row == r]
        if not mine:
            continue
        w = np.array([1.0 if weights is None else weights[k] for k in mine])
        emb = params[[IDS[k] for k in mine]]
        total = (w[:, None] * emb).sum(axis=0)
        out[r] = {"sum": total, "mean": total / w.sum(),
                  "sqrtn": total / np.sqrt((w ** 2).sum())}[combiner]
    return out


def test_embedding_lookup_sparse_against_numpy():
    ids = tf.SparseTensor(IDS_IDX, tf.constant(IDS, tf.int64), [4, 3])
    weights = tf.SparseTensor(IDS_IDX, WEIGHTS, [4, 3])
    params = tf.constant(PARAMS)
    parts = [tf.constant(PARAMS[:3]), tf.constant(PARAMS[3:])]
    mod_parts = [tf.constant(PARAMS[0::2]), tf.constant(PARAMS[1::2])]
    fetches = {}
    for combiner in ("sum", "mean", "sqrtn"):
        fetches[combiner] = tf.nn.embedding_lookup_sparse(params, ids, None, combiner=combiner)
        fetches["w_" + combiner] = tf.nn.embedding_lookup_sparse(params, ids, weights,
                                                                 combiner=combiner)
    fetches["div"] = tf.nn.embedding_lookup_sparse(parts, ids, weights, "div", combiner="sum")
    fetches["mod"] = tf.nn.embedding_lookup_sparse(mod_parts, ids, None, combiner="mean")
    fetches["max_norm"] = tf.nn.embedding_lookup_sparse(params, ids, None, combiner="sum",
                                                        max_norm=0.5)
    got = run(fetches)
    for combiner in ("sum", "mean", "sqrtn"):
        np.testing.assert_allclose(got[combiner], lookup_expect(PARAMS, combiner), rtol=1e-12)
        want = lookup_expect(PARAMS, combiner, WEIGHTS)
        want[1] = np.nan if combiner != "sum" else 0  # 0 / 0 in an empty row, as in TF1
        np.testing.assert_allclose(got["w_" + combiner], want, rtol=1e-12)
    np.testing.assert_allclose(got["div"], lookup_expect(PARAMS, "sum", WEIGHTS), rtol=1e-12)
    np.testing.assert_allclose(got["mod"], lookup_expect(PARAMS, "mean"), rtol=1e-12)
    norms = np.linalg.norm(PARAMS, axis=1, keepdims=True)
    clipped = PARAMS * np.minimum(1, 0.5 / norms)
    np.testing.assert_allclose(got["max_norm"], lookup_expect(clipped, "sum"), rtol=1e-12)
    with pytest.raises(ValueError, match="combiner must be one of"):
        tf.nn.embedding_lookup_sparse(params, ids, None, combiner="max")
    with pytest.raises(TypeError, match="sp_ids must be SparseTensor"):
        tf.nn.embedding_lookup_sparse(params, [1, 2], None, combiner="sum")


def test_embedding_lookup_sparse_gradient_to_params():
    ids = tf.SparseTensor(IDS_IDX, tf.constant(IDS, tf.int64), [4, 3])
    weights = tf.SparseTensor(IDS_IDX, WEIGHTS, [4, 3])
    w_out = np.random.default_rng(6).uniform(0.5, 1.5, (4, 3))
    params = tf.placeholder(tf.float64, [6, 3])
    loss = tf.reduce_sum(w_out * tf.nn.embedding_lookup_sparse(params, ids, weights,
                                                               combiner="sqrtn"))
    grad = tf.gradients(loss, params)[0]
    assert isinstance(grad, tf.IndexedSlices)  # a gather's gradient, as in TF1
    grad = tf.convert_to_tensor(grad)
    got = run(grad, {params: PARAMS})
    want = numeric_gradient(
        lambda p: float(np.nansum(w_out * lookup_expect(p, "sqrtn", WEIGHTS))),
        [PARAMS.copy()], 0)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_safe_embedding_lookup_sparse_prunes_and_fills():
    # 3-D ids [2, 2, 3]: invalid ids (-1) and non-positive weights are dropped; empty rows
    # get default_id's embedding, or zeros.
    idx = [[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 1, 0], [1, 1, 1]]
    ids = tf.SparseTensor(idx, tf.constant([2, -1, 4, 5, 1], tf.int64), [2, 2, 3])
    weights = tf.SparseTensor(idx, tf.constant([1.0, 1.0, 0.0, 2.0, 1.0], tf.float64),
                              [2, 2, 3])
    params = [tf.constant(PARAMS[:3]), tf.constant(PARAMS[3:])]
    zeros = tf.nn.safe_embedding_lookup_sparse(params, ids, weights)
    default = tf.nn.safe_embedding_lookup_sparse(params, ids, None, combiner="sum",
                                                 default_id=0)
    assert zeros.shape.as_list() == [2, 2, 3]
    got_zeros, got_default = run([zeros, default])
    want = np.zeros((2, 2, 3))
    want[0, 0] = PARAMS[2]  # weight-1 mean of id 2 (id -1 pruned)
    want[1, 1] = (2 * PARAMS[5] + PARAMS[1]) / 3  # row [0, 1] lost its zero-weight id
    np.testing.assert_allclose(got_zeros, want, rtol=1e-12)
    want_default = np.stack([[PARAMS[2], PARAMS[4]], [PARAMS[0], PARAMS[5] + PARAMS[1]]])
    np.testing.assert_allclose(got_default, want_default, rtol=1e-12)
