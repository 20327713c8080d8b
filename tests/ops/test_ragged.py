"""tf.RaggedTensor and tf.ragged against Python lists written here: factories, dense and
sparse conversions, indexing, tf.ragged's functions, RaggedTensorValue fetches and feeds,
validation errors, and gradients through the conversions (finite differences).
"""

import numpy as np
import pytest

import tensorflux as tf
from tests.ops.harness import numeric_gradient

InvalidArgumentError = tf.errors.InvalidArgumentError


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def rows_of(splits, values):
    return [list(values[splits[i]:splits[i + 1]]) for i in range(len(splits) - 1)]


def pad(rows, default=0, width=None):
    width = max(len(r) for r in rows) if width is None else width
    return np.array([(list(r) + [default] * width)[:width] for r in rows])


VALUES = [3, 1, 4, 1, 5, 9, 2]
SPLITS = [0, 2, 2, 5, 7]
ROWS = rows_of(SPLITS, VALUES)  # [[3, 1], [], [4, 1, 5], [9, 2]]


def test_factories_and_partition_views():
    rt = tf.RaggedTensor.from_row_splits(VALUES, SPLITS)
    lengths = [len(r) for r in ROWS]
    rowids = [i for i, r in enumerate(ROWS) for _ in r]
    nested = tf.RaggedTensor.from_nested_row_lengths(VALUES, [[1, 3], lengths])
    assert rt.shape.as_list() == [4, None] and rt.ragged_rank == 1 and rt.dtype == tf.int32
    assert nested.ragged_rank == 2 and nested.shape.as_list() == [2, None, None]
    fetches = {
        "splits": rt,
        "lengths": tf.RaggedTensor.from_row_lengths(VALUES, lengths),
        "rowids": tf.RaggedTensor.from_value_rowids(VALUES, rowids, nrows=6),
        "starts": tf.RaggedTensor.from_row_starts(VALUES, SPLITS[:-1]),
        "limits": tf.RaggedTensor.from_row_limits(VALUES, SPLITS[1:]),
        "nested": nested,
        "nested_splits": tf.RaggedTensor.from_nested_row_splits(VALUES, [[0, 1, 4], SPLITS]),
        "nested_rowids": tf.RaggedTensor.from_nested_value_rowids(VALUES, [[0, 1, 1, 1],
                                                                           rowids]),
        "value_rowids": rt.value_rowids(), "nrows": rt.nrows(), "row_lengths": rt.row_lengths(),
        "starts_view": rt.row_starts(), "limits_view": rt.row_limits(),
        "bounding": nested.bounding_shape(), "nested_lengths": nested.nested_row_lengths(),
        "flat": nested.flat_values, "with_values": rt.with_values(rt.values * 10),
        "splits32": rt.with_row_splits_dtype(tf.int32).row_splits,
    }
    got = run(fetches)
    assert isinstance(got["splits"], tf.ragged.RaggedTensorValue)
    assert got["splits"].to_list() == ROWS
    assert got["lengths"].to_list() == ROWS and got["starts"].to_list() == ROWS
    assert got["limits"].to_list() == ROWS
    assert got["rowids"].to_list() == ROWS + [[], []]
    assert got["nested"].to_list() == [[ROWS[0]], ROWS[1:]]
    assert got["nested_splits"].to_list() == [[ROWS[0]], ROWS[1:]]
    assert got["nested_rowids"].to_list() == [[ROWS[0]], ROWS[1:]]
    assert got["value_rowids"].tolist() == rowids and got["nrows"] == 4
    assert got["row_lengths"].tolist() == lengths
    assert got["starts_view"].tolist() == SPLITS[:-1]
    assert got["limits_view"].tolist() == SPLITS[1:]
    assert got["bounding"].tolist() == [2, 3, 3]
    assert [x.tolist() for x in got["nested_lengths"]] == [[1, 3], lengths]
    assert got["flat"].tolist() == VALUES
    assert got["with_values"].to_list() == [[10 * v for v in r] for r in ROWS]
    assert got["splits32"].dtype == np.int32
    value = got["nested"]
    assert value.ragged_rank == 2 and value.shape == (2, None, None)
    assert str(got["splits"]) == f"<tf.RaggedTensorValue {ROWS}>"


def test_from_tensor_and_from_sparse():
    dense = np.array([[1, 2, 0, 0], [3, 0, 4, 0], [0, 0, 0, 0]])
    cube = np.arange(24).reshape(2, 3, 4)
    st = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], [1.0, 2.0, 3.0], [4, 5])
    got = run([tf.RaggedTensor.from_tensor(dense),
               tf.RaggedTensor.from_tensor(dense, lengths=[1, 3, 0]),
               tf.RaggedTensor.from_tensor(dense, padding=0),
               tf.RaggedTensor.from_tensor(cube, ragged_rank=2),
               tf.RaggedTensor.from_sparse(st)])
    assert got[0].to_list() == dense.tolist()
    assert got[1].to_list() == [[1], [3, 0, 4], []]
    assert got[2].to_list() == [[1, 2], [3, 0, 4], []]
    assert got[3].to_list() == cube.tolist() and got[3].ragged_rank == 2
    assert got[4].to_list() == [[1.0, 2.0], [], [3.0], []]
    bad = tf.RaggedTensor.from_sparse(tf.SparseTensor([[0, 1]], [1.0], [2, 3]))
    with pytest.raises(InvalidArgumentError, match="SparseTensor is not right-ragged"):
        run(bad)
    with pytest.raises(ValueError, match="rank"):
        tf.RaggedTensor.from_sparse(tf.SparseTensor([[0, 1, 2]], [1.0], [2, 3, 4]))


def test_to_tensor_and_to_sparse():
    rt = tf.RaggedTensor.from_row_splits(VALUES, SPLITS)
    inner = tf.RaggedTensor.from_row_splits(np.arange(12.0).reshape(6, 2), [0, 4, 6])
    strings = tf.ragged.constant([["a"], [], ["b", "c"]])
    got = run([rt.to_tensor(), rt.to_tensor(default_value=-1), rt.to_tensor(shape=[3, 2]),
               rt.to_tensor(shape=[5, 4]), inner.to_tensor(), rt.to_sparse(), inner.to_sparse(),
               strings.to_tensor()])
    np.testing.assert_array_equal(got[0], pad(ROWS))
    np.testing.assert_array_equal(got[1], pad(ROWS, -1))
    np.testing.assert_array_equal(got[2], pad(ROWS[:3], width=2))
    np.testing.assert_array_equal(got[3], pad(ROWS + [[]], width=4))
    want = np.zeros((2, 4, 2))
    want[0], want[1, :2] = np.arange(8.0).reshape(4, 2), [[8, 9], [10, 11]]
    np.testing.assert_array_equal(got[4], want)
    np.testing.assert_array_equal(got[5].indices, [[r, c] for r, row in enumerate(ROWS)
                                                   for c in range(len(row))])
    np.testing.assert_array_equal(got[5].values, VALUES)
    np.testing.assert_array_equal(got[5].dense_shape, [4, 3])
    np.testing.assert_array_equal(got[6].dense_shape, [2, 4, 2])
    assert got[6].values.tolist() == list(np.arange(12.0))
    assert got[7].tolist() == [[b"a", b""], [b"", b""], [b"b", b"c"]]
    assert rt.to_tensor(shape=[3, 2]).shape.as_list() == [3, 2]
    with pytest.raises(ValueError, match="only supported in eager mode"):
        rt.to_list()


def test_gradients_through_map_flat_values_and_conversions():
    splits = [0, 2, 2, 5]

    def expect(v, d):
        rows = rows_of(splits, list(v ** 2))
        return np.concatenate([pad(rows, d, 2).ravel(), v ** 2])

    v0 = np.array([0.5, -1.0, 2.0, 1.5, -0.25])
    d0 = np.array(0.75)
    weights = np.random.default_rng(7).uniform(0.5, 1.5, 11)
    with tf.Graph().as_default():
        v, d = tf.placeholder(tf.float64, [5]), tf.placeholder(tf.float64, [])
        rt = tf.ragged.map_flat_values(tf.square, tf.RaggedTensor.from_row_splits(v, splits))
        out = tf.concat([tf.reshape(rt.to_tensor(d, shape=[3, 2]), [-1]),
                         rt.to_sparse().values], 0)
        grads = tf.gradients(tf.reduce_sum(out * weights), [v, d])
        with tf.Session() as sess:
            got = sess.run(grads, {v: v0, d: d0})
    for i, g in enumerate(got):
        want = numeric_gradient(lambda *xs: float(np.sum(weights * expect(*xs))),
                                [v0.copy(), d0.copy()], i)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


def test_constant_constant_value_and_errors():
    assert run(tf.ragged.constant([[1, 2], [3]])).to_list() == [[1, 2], [3]]
    c = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
    assert c.ragged_rank == 1 and c.shape.as_list() == [2, None, 2]
    assert run(c).to_list() == [[[1, 2], [3, 4]], [[5, 6]]]
    dense = tf.ragged.constant([[1, 2], [3, 4]], ragged_rank=0)
    assert isinstance(dense, tf.Tensor)
    value = tf.ragged.constant_value([["a", "b"], []], dtype=None)
    assert value.to_list() == [["a", "b"], []] and value.row_splits.dtype == np.int64
    deep = tf.ragged.constant_value([[[1], [2, 3]], []])
    assert deep.ragged_rank == 2 and deep.to_list() == [[[1], [2, 3]], []]
    with pytest.raises(ValueError, match="all scalar values must have the same nesting depth"):
        tf.ragged.constant([[1, [2]]])
    with pytest.raises(ValueError, match="empty list nesting is greater than scalar"):
        tf.ragged.constant([[1], [[]]])
    with pytest.raises(ValueError, match="RaggedTensor constructor is private"):
        tf.RaggedTensor(tf.constant([1]), tf.constant([0, 1], tf.int64))


def test_placeholder_feed_fetch_and_nest():
    ph = tf.ragged.placeholder(tf.float32, ragged_rank=2, value_shape=[2])
    assert ph.ragged_rank == 2 and ph.shape.as_list() == [None, None, None, 2]
    value = tf.ragged.constant_value([[[[1.0, 2.0]], []], [[[3.0, 4.0], [5.0, 6.0]]]],
                                     ragged_rank=2, dtype=np.float32)
    doubled = tf.ragged.map_flat_values(tf.multiply, ph, 2.0)
    echoed, twice = run([ph, doubled], {ph: value})
    assert echoed.to_list() == value.to_list()
    assert twice.to_list() == [[[[2.0, 4.0]], []], [[[6.0, 8.0], [10.0, 12.0]]]]
    flat = tf.nest.flatten([ph], expand_composites=True)
    assert flat == [ph.flat_values] + list(ph.nested_row_splits)
    rebuilt = tf.nest.pack_sequence_as([ph], flat, expand_composites=True)[0]
    assert isinstance(rebuilt, tf.RaggedTensor) and rebuilt.flat_values is ph.flat_values
    spec = tf.RaggedTensorSpec([None, None, None, 2], tf.float32, ragged_rank=2)
    assert ph._type_spec == spec and spec.is_compatible_with(value)
    with pytest.raises(TypeError, match="RaggedTensorValue"):
        run(ph, {ph: [[1.0]]})


def test_getitem_against_python():
    rt = tf.ragged.constant(ROWS)
    deep = tf.ragged.constant([[[1, 2], [3]], [], [[4], [5, 6, 7]]])
    got = run([rt[0], rt[-1], rt[2, 1], rt[1:3], rt[::2], rt[:, 0:2], rt[:, -1:],
               deep[2], deep[2, 1], deep[:, :, 1:], deep[0, 0, 1], rt[tf.constant(2)]])
    assert got[0].tolist() == ROWS[0] and got[1].tolist() == ROWS[-1] and got[2] == 1
    assert got[3].to_list() == ROWS[1:3] and got[4].to_list() == ROWS[::2]
    assert got[5].to_list() == [r[0:2] for r in ROWS]
    assert got[6].to_list() == [r[-1:] for r in ROWS]
    assert got[7].to_list() == [[4], [5, 6, 7]] and got[8].tolist() == [5, 6, 7]
    assert got[9].to_list() == [[[2], []], [], [[], [6, 7]]] and got[10] == 2
    assert got[11].tolist() == ROWS[2]
    with pytest.raises(InvalidArgumentError, match="slice index 1 of dimension 1 out of "
                                                   "bounds"):
        run(rt[:, 1])


def test_ragged_functions_against_python():
    rt = tf.ragged.constant(ROWS)
    fetches = [
        tf.ragged.range([3, 0, 2]), tf.ragged.range([1, 5], 10, [4, 2]),
        tf.ragged.range(0.5, [2.0, 1.0], 0.5),
        tf.ragged.boolean_mask([[1, 2, 3], [4, 5, 6]], [[True, False, True], [False] * 3]),
        tf.ragged.boolean_mask(np.arange(8).reshape(2, 2, 2),
                               [[[True, False], [True, True]], [[False, False], [True, False]]]),
        tf.ragged.boolean_mask(rt, tf.ragged.map_flat_values(tf.greater, rt, 2)),
        tf.ragged.boolean_mask(rt, [True, False, False, True]),
        tf.ragged.stack([rt, rt]),
        tf.ragged.stack([rt, tf.constant([[7], [8], [9], [6]])], axis=1),
        tf.ragged.stack([tf.ragged.constant([[[1], [2, 3]]]), tf.ragged.constant([[[4], [5]]])],
                        axis=2),
        tf.ragged.stack_dynamic_partitions([10, 20, 30, 40, 50], [2, 0, 2, 2, 0], 4),
        tf.ragged.row_splits_to_segment_ids(SPLITS),
        tf.ragged.segment_ids_to_row_splits([0, 0, 2, 2, 2], num_segments=5),
        tf.ragged.cross([tf.ragged.constant([["a"], ["b", "c"]]), tf.constant([["d"], ["e"]])]),
        tf.ragged.cross_hashed([tf.ragged.constant([["batch1-FC1-F1"]]),
                                tf.ragged.constant([["batch1-FC2-F1"]]),
                                tf.ragged.constant([["batch1-FC3-F1"]])], num_buckets=100),
        tf.ragged_fill_empty_rows(tf.constant([1, 1, 3], tf.int64), [1.0, 2.0, 3.0],
                                  tf.constant(5, tf.int64), 0.0),
        rt * 2 + rt, 10 - rt, rt >= 3, -(rt // 2),
    ]
    got = run(fetches)
    assert got[0].to_list() == [[0, 1, 2], [], [0, 1]]
    assert got[1].to_list() == [list(range(1, 10, 4)), list(range(5, 10, 2))]
    assert got[2].to_list() == [[0.5, 1.0, 1.5], [0.5]]
    assert got[3].to_list() == [[1, 3], []]
    assert got[4].to_list() == [[[0], [2, 3]], [[], [6]]]
    assert got[5].to_list() == [[v for v in r if v > 2] for r in ROWS]
    assert got[6].to_list() == [ROWS[0], ROWS[3]]
    assert got[7].to_list() == [ROWS, ROWS]
    assert got[8].to_list() == [[r, [x]] for r, x in zip(ROWS, [7, 8, 9, 6])]
    assert got[9].to_list() == [[[[1], [4]], [[2, 3], [5]]]]
    assert got[10].to_list() == [[20, 50], [], [10, 30, 40], []]
    assert got[11].tolist() == [0, 0, 2, 2, 2, 3, 3]
    assert got[12].tolist() == [0, 2, 2, 5, 5, 5]
    assert got[13].to_list() == [[b"a_X_d"], [b"b_X_e", b"c_X_e"]]
    assert got[14].to_list() == [[83]]  # TF's golden value for these features
    fill = got[15]
    assert fill.output_value_rowids.tolist() == [0, 1, 1, 2, 3, 4]
    assert fill.output_values.tolist() == [0.0, 1.0, 2.0, 0.0, 3.0, 0.0]
    assert fill.empty_row_indicator.tolist() == [True, False, True, False, True]
    assert fill.reverse_index_map.tolist() == [1, 2, 4]
    assert got[16].to_list() == [[3 * v for v in r] for r in ROWS]
    assert got[17].to_list() == [[10 - v for v in r] for r in ROWS]
    assert got[18].to_list() == [[v >= 3 for v in r] for r in ROWS]
    assert got[19].to_list() == [[-(v // 2) for v in r] for r in ROWS]
    # A dense [4] aligns with the ragged dimension, which only broadcasts from size 1
    # (TF's ragged broadcasting fails the run).
    with pytest.raises(InvalidArgumentError, match="Unable to broadcast: dimension size "
                                                   "mismatch in dimension"):
        run(rt + tf.constant([1, 2, 3, 4]))


def test_validation_errors():
    # Known partitions fail when built (TF's static asserts), fed ones when run.
    with pytest.raises(InvalidArgumentError, match="from_row_splits do not form a valid "
                                                   "RaggedTensor"):
        tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 2])
    splits = tf.placeholder(tf.int64, [None])
    from_splits = tf.RaggedTensor.from_row_splits([1, 2, 3], splits)
    rowids = tf.placeholder(tf.int64, [None])
    from_rowids = tf.RaggedTensor.from_value_rowids([1, 2, 3], rowids)
    with tf.Session() as sess:
        for rt, feed in ((from_splits, {splits: [0, 2, 1, 3]}), (from_splits, {splits: [1, 3]}),
                         (from_splits, {splits: [0, 2]}), (from_rowids, {rowids: [0, 2, 1]})):
            with pytest.raises(InvalidArgumentError, match="do not form a valid RaggedTensor"):
                sess.run(rt, feed)
        assert sess.run(from_rowids, {rowids: [0, 0, 2]}).to_list() == [[1, 2], [], [3]]
        with pytest.raises(InvalidArgumentError, match="Partitions must be in the range"):
            sess.run(tf.ragged.stack_dynamic_partitions([1, 2], [0, 3], 3))
        with pytest.raises(InvalidArgumentError, match="Requires delta != 0"):
            sess.run(tf.ragged.range([1, 2], 5, [1, 0]))
    with pytest.raises(ValueError, match="row_splits must have dtype int32 or int64"):
        tf.RaggedTensor.from_row_splits([1.0], [0.0, 1.0])
    with pytest.raises(ValueError, match="mask cannot be scalar"):
        tf.ragged.boolean_mask([1, 2], True)
