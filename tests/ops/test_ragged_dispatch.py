"""TF 1.15's ragged dispatch: public ops taking RaggedTensor arguments (elementwise ops with
ragged broadcasting, reductions, array ops, segment ops), RaggedTensor operators and
tf.nest over ragged/sparse specs. Expectations are Python lists / NumPy per row."""

import math

import numpy as np
import pytest

import tensorflux as tf

InvalidArgumentError = tf.errors.InvalidArgumentError

ROWS = [[1.0, 2.0, 3.0], [], [4.0, 5.0], [-6.0]]


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict=feed_dict)


def _lists(values):
    return [v.to_list() if hasattr(v, "to_list") else v.tolist() for v in values]


def _map(fn, rows):
    return [[fn(v) for v in row] for row in rows]


def test_unary_and_list_elementwise_ops_keep_the_partitions():
    rt = tf.ragged.constant(ROWS)
    value = tf.ragged.constant_value(ROWS)
    got = _lists(_run([
        tf.exp(rt), tf.math.abs(rt), tf.negative(rt), tf.cast(rt, tf.int32),
        tf.zeros_like(rt), tf.ones_like(rt, dtype=tf.int64), tf.clip_by_value(rt, 0.0, 3.5),
        tf.logical_not(rt > 2), tf.square(x=rt), tf.add_n([rt, rt, rt]), tf.identity(rt),
        tf.math.log_sigmoid(rt), tf.sqrt(value), tf.bitwise.invert(tf.cast(rt, tf.int32)),
        tf.saturate_cast(rt * 100, tf.int8),
        tf.io.decode_compressed(tf.ragged.constant([[b"ab", b"c"], []])),
    ]))
    assert np.allclose(sum(got[0], []), [math.exp(v) for v in sum(ROWS, [])])
    assert [len(r) for r in got[0]] == [3, 0, 2, 1]
    assert got[1] == _map(abs, ROWS)
    assert got[2] == _map(lambda v: -v, ROWS)
    assert got[3] == _map(int, ROWS)
    assert got[4] == _map(lambda v: 0.0, ROWS)
    assert got[5] == _map(lambda v: 1, ROWS)
    assert got[6] == _map(lambda v: min(max(v, 0.0), 3.5), ROWS)
    assert got[7] == _map(lambda v: not v > 2, ROWS)
    assert got[8] == _map(lambda v: v * v, ROWS)
    assert got[9] == _map(lambda v: 3 * v, ROWS)
    assert got[10] == ROWS
    assert np.allclose(sum(got[11], []), [-math.log1p(math.exp(-v)) for v in sum(ROWS, [])])
    assert np.allclose(sum(got[12][:3], []), [math.sqrt(v) for v in sum(ROWS[:3], [])])
    assert got[13] == _map(lambda v: ~int(v), ROWS)
    assert got[14] == _map(lambda v: int(max(min(v * 100, 127), -128)), ROWS)
    assert got[15] == [[b"ab", b"c"], []]
    # add_n's ragged items must share their partitions.
    other = tf.ragged.constant([[1.0], [2.0, 3.0], [], [4.0, 5.0, 6.0]])
    with pytest.raises(InvalidArgumentError, match="Inputs must have identical ragged splits"):
        _run(tf.add_n([rt, other]))


def test_binary_elementwise_ops_broadcast_as_tf():
    rt = tf.ragged.constant(ROWS)
    inner = tf.ragged.constant([[[1, 2], [3, 4]], [], [[5, 6]]], ragged_rank=1)
    col = np.array([[10.0], [20.0], [30.0], [40.0]], np.float32)
    got = _lists(_run([
        tf.add(rt, 1.0), rt + rt, tf.multiply(rt, col), rt - tf.constant([[0.5]]),
        10.0 - rt, tf.maximum(rt, 2.0), tf.math.squared_difference(rt, 1.0),
        tf.pow(rt, 2.0), tf.equal(rt, 2.0), tf.less_equal(rt, rt * 0 + 2),
        tf.logical_and(rt > 0, rt < 4), tf.add(x=rt, y=col), tf.truediv(rt, 2.0),
        inner * tf.constant([1, 10]), inner + tf.constant([[[100, 200]], [[0, 0]], [[7, 7]]]),
        tf.bitwise.left_shift(tf.cast(rt + 7, tf.int32), 1), rt // 2, rt % 2,
        tf.multiply(tf.ragged.constant_value(ROWS), 2.0), tf.atan2(rt, 1.0),
        # A dense operand of higher rank repeats the ragged one in its leading dimensions;
        # a ragged tensor of one row broadcasts to the dense rows.
        rt + tf.constant([[[100.0]], [[200.0]]]), tf.ragged.constant([[1.0, 2.0]]) + col,
        tf.constant(col) - rt,  # Tensor.__sub__ gives way to RaggedTensor.__rsub__
    ]))
    assert got[0] == _map(lambda v: v + 1, ROWS)
    assert got[1] == _map(lambda v: 2 * v, ROWS)
    assert got[2] == [[v * c for v in row] for row, c in zip(ROWS, [10, 20, 30, 40])]
    assert got[3] == _map(lambda v: v - 0.5, ROWS)
    assert got[4] == _map(lambda v: 10 - v, ROWS)
    assert got[5] == _map(lambda v: max(v, 2.0), ROWS)
    assert got[6] == _map(lambda v: (v - 1) ** 2, ROWS)
    assert got[7] == _map(lambda v: v ** 2, ROWS)
    assert got[8] == _map(lambda v: v == 2.0, ROWS)
    assert got[9] == _map(lambda v: v <= 2, ROWS)
    assert got[10] == _map(lambda v: 0 < v < 4, ROWS)
    assert got[11] == [[v + c for v in row] for row, c in zip(ROWS, [10, 20, 30, 40])]
    assert got[12] == _map(lambda v: v / 2, ROWS)
    assert got[13] == [[[1, 20], [3, 40]], [], [[5, 60]]]
    assert got[14] == [[[101, 202], [103, 204]], [], [[12, 13]]]
    assert got[15] == _map(lambda v: int(v + 7) << 1, ROWS)
    assert got[16] == _map(lambda v: v // 2, ROWS)
    assert got[17] == _map(lambda v: v % 2, ROWS)
    assert got[18] == _map(lambda v: 2 * v, ROWS)
    assert np.allclose(sum(got[19], []), [math.atan2(v, 1) for v in sum(ROWS, [])])
    assert got[20] == [_map(lambda v: v + 100, ROWS), _map(lambda v: v + 200, ROWS)]
    assert got[21] == [[1.0 + c, 2.0 + c] for c in [10, 20, 30, 40]]
    assert got[22] == [[c - v for v in row] for row, c in zip(ROWS, [10, 20, 30, 40])]


def test_broadcasting_errors_are_tfs():
    rt = tf.ragged.constant(ROWS)
    other = tf.ragged.constant([[1.0], [2.0, 3.0], [4.0, 5.0], [6.0]])
    message = "Unable to broadcast: dimension size mismatch in dimension"
    with pytest.raises(InvalidArgumentError, match=message):
        _run(rt + other)  # same number of rows, other row lengths
    with pytest.raises(InvalidArgumentError, match=message):
        _run(rt * tf.constant([[1.0], [2.0]]))  # 2 rows against 4
    with pytest.raises(InvalidArgumentError, match=message):
        _run(rt * tf.constant([[1.0, 2.0, 3.0]]))  # a ragged dimension only broadcasts from 1
    with pytest.raises(ValueError, match="mismatched row_splits dtypes"):
        rt + tf.ragged.constant(ROWS, row_splits_dtype=tf.int32)


def test_fed_ragged_rows_broadcast_against_dense_rows():
    fed = tf.ragged.placeholder(tf.float32, 1)
    total = fed + tf.constant([[1.0], [2.0], [3.0]])

    def feed(rows):
        return {fed: tf.ragged.constant_value(rows, dtype=np.float32)}

    with tf.Session() as sess:
        assert sess.run(total, feed([[1.0, 2.0]])).to_list() == [[2.0, 3.0], [3.0, 4.0],
                                                                 [4.0, 5.0]]
        assert sess.run(total, feed([[1.0, 2.0], [], [5.0]])).to_list() == [[2.0, 3.0], [],
                                                                            [8.0]]
        with pytest.raises(InvalidArgumentError, match="Unable to broadcast: dimension size "
                                                       "mismatch in dimension"):
            sess.run(total, feed([[1.0, 2.0], []]))


def test_reductions_over_ragged_axes():
    rt = tf.ragged.constant(ROWS)
    r3 = tf.ragged.constant([[[1, 2], [3]], [], [[4, 5, 6], [], [7]]])
    got = _run([
        tf.reduce_sum(rt, axis=1), tf.reduce_sum(rt, axis=0), tf.reduce_sum(rt),
        tf.reduce_prod(rt, axis=1), tf.reduce_min(rt, axis=-1), tf.reduce_max(rt, axis=0),
        tf.reduce_mean(rt, axis=1), tf.reduce_mean(rt, axis=0), tf.reduce_sum(rt, axis=[0, 1]),
        tf.reduce_any(rt > 3, axis=1), tf.reduce_all(rt > 0, axis=1),
        tf.reduce_sum(rt, reduction_indices=1), tf.reduce_sum(r3, axis=2),
        tf.reduce_sum(r3, axis=1), tf.reduce_max(r3, axis=[1, 2]), tf.math.reduce_mean(r3),
    ])
    np.testing.assert_allclose(got[0], [6, 0, 9, -6])
    np.testing.assert_allclose(got[1], [1 + 4 - 6, 2 + 5, 3])
    assert got[2] == pytest.approx(9.0)
    np.testing.assert_allclose(got[3], [6, 1, 20, -6])
    lowest = np.finfo(np.float32).max
    np.testing.assert_allclose(got[4], [1, lowest, 4, -6])  # empty row: the type's max
    np.testing.assert_allclose(got[5], [4, 5, 3])
    np.testing.assert_allclose(got[6], [2, np.nan, 4.5, -6])  # 0 / 0 for the empty row
    np.testing.assert_allclose(got[7], [-1 / 3, 3.5, 3])
    assert got[8] == pytest.approx(9.0)
    assert got[9].tolist() == [False, False, True, False]
    assert got[10].tolist() == [True, True, True, False]
    np.testing.assert_allclose(got[11], [6, 0, 9, -6])
    assert got[12].to_list() == [[3, 3], [], [15, 0, 7]]
    # axis 1 of [3, (rows), (items)]: the i-th rows summed, ragged like the longest row.
    assert got[13].to_list() == [[4, 2], [], [11, 5, 6]]
    np.testing.assert_array_equal(got[14], [3, np.iinfo(np.int32).min, 7])
    assert got[15] == pytest.approx(28 / 7)
    with pytest.raises(ValueError, match="keepdims=True is not supported for RaggedTensors"):
        tf.reduce_sum(rt, axis=1, keepdims=True)
    with pytest.raises(ValueError, match=r"axis=2 out of bounds: expected -2<=axis<2"):
        tf.reduce_sum(rt, axis=2)


def test_reduction_gradients_reach_the_flat_values():
    values = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, -6.0], tf.float64)
    rt = tf.RaggedTensor.from_row_splits(values, [0, 3, 3, 5, 6])
    col = tf.constant([[1.0], [2.0], [3.0], [4.0]], tf.float64)
    weights = tf.constant([1.0, 10.0, 100.0, 1000.0], tf.float64)
    grads = _run([
        tf.gradients(tf.reduce_sum(tf.reduce_sum(rt, axis=1) * weights), values)[0],
        tf.gradients(tf.reduce_sum(tf.reduce_mean(rt, axis=1)[::2]), values)[0],
        tf.gradients(tf.reduce_sum(tf.reduce_max(rt, axis=1) * weights), values)[0],
        tf.gradients(tf.reduce_sum(tf.reduce_sum(rt, axis=0)), values)[0],
        tf.gradients(tf.reduce_sum(rt * col), [values, col]),
    ])
    np.testing.assert_allclose(grads[0], [1, 1, 1, 100, 100, 1000])
    np.testing.assert_allclose(grads[1], [1 / 3, 1 / 3, 1 / 3, 1 / 2, 1 / 2, 0])
    np.testing.assert_allclose(grads[2], [0, 0, 1, 0, 100, 1000])
    np.testing.assert_allclose(grads[3], np.ones(6))
    np.testing.assert_allclose(grads[4][0], [1, 1, 1, 3, 3, 4])
    np.testing.assert_allclose(grads[4][1], [[6], [0], [9], [-6]])


def test_array_ops_on_ragged_arguments():
    rt = tf.ragged.constant(ROWS)
    two = tf.ragged.constant([[7.0], [8.0, 9.0], [], []])
    got = _run([
        tf.concat([rt, two], axis=0), tf.concat([rt, two], axis=1),
        tf.concat([rt, tf.constant([[0.0], [0.0], [0.0], [0.0]])], axis=1),
        tf.stack([rt, two], axis=0), tf.stack([rt, two], axis=1),
        tf.gather(rt, [3, 0, 0]), tf.gather(rt, [[2], [1]]), tf.gather(rt, 2),
        tf.gather(tf.constant([10.0, 20.0, 30.0]), tf.ragged.constant([[2, 0], [], [1]])),
        tf.gather_nd(rt, [[0, 2], [2, 1]]), tf.gather_nd(rt, [[3], [0]]),
        tf.batch_gather(rt, tf.ragged.constant([[2, 0], [], [1, 1], [0]])),
        tf.expand_dims(rt, 0), tf.expand_dims(rt, 1), tf.expand_dims(rt, axis=2),
        tf.tile(rt, [2, 2]), tf.size(rt), tf.rank(rt), tf.size(rt, out_type=tf.int64),
        tf.squeeze(tf.expand_dims(rt, 2), axis=[2]),
        tf.where(rt > 2), tf.where(rt > 2, rt, -rt), tf.where([True, False, False, True], rt, two),
    ])
    (cat0, cat1, cat_dense, st0, st1, g1, g2, g0, g_ragged_idx, gnd, gnd_rows, bg, e0, e1, e2,
     tiled, size, rank, size64, squeezed, coords, chosen, rows) = got
    assert cat0.to_list() == ROWS + [[7.0], [8.0, 9.0], [], []]
    assert cat1.to_list() == [r + s for r, s in zip(ROWS, [[7.0], [8.0, 9.0], [], []])]
    assert cat_dense.to_list() == [r + [0.0] for r in ROWS]
    assert st0.to_list() == [ROWS, [[7.0], [8.0, 9.0], [], []]]
    assert st1.to_list() == [[r, s] for r, s in zip(ROWS, [[7.0], [8.0, 9.0], [], []])]
    assert g1.to_list() == [ROWS[3], ROWS[0], ROWS[0]]
    assert g2.to_list() == [[ROWS[2]], [ROWS[1]]]
    assert g0.tolist() == ROWS[2]
    assert g_ragged_idx.to_list() == [[30.0, 10.0], [], [20.0]]
    assert gnd.tolist() == [3.0, 5.0]
    assert gnd_rows.to_list() == [ROWS[3], ROWS[0]]
    assert bg.to_list() == [[3.0, 1.0], [], [5.0, 5.0], [-6.0]]
    assert e0.to_list() == [ROWS]
    assert e1.to_list() == [[r] for r in ROWS]
    assert e2.to_list() == [[[v] for v in r] for r in ROWS]
    assert tiled.to_list() == [r + r for r in ROWS] * 2
    assert (size, rank, size64) == (6, 2, 6)
    assert squeezed.to_list() == ROWS
    assert coords.tolist() == [[0, 2], [2, 0], [2, 1]]
    assert chosen.to_list() == _map(lambda v: v if v > 2 else -v, ROWS)
    assert rows.to_list() == [ROWS[0], [8.0, 9.0], [], ROWS[3]]
    with pytest.raises(ValueError, match="axis != 0 is not supported for ragged gather yet"):
        tf.gather(rt, [0], axis=1)
    with pytest.raises(ValueError, match="Cannot squeeze a ragged dimension"):
        tf.squeeze(rt, axis=1)
    with pytest.raises(ValueError, match="Ragged squeeze must have 'axis' argument"):
        tf.squeeze(rt)
    with pytest.raises(ValueError, match="x and y must be either both None or both non-None"):
        tf.where(rt > 2, rt)


def test_segment_ops_and_dynamic_partition():
    rt = tf.ragged.constant(ROWS)
    got = _run([
        tf.math.unsorted_segment_sum(rt, [0, 1, 0, 1], 2),
        tf.math.unsorted_segment_mean(rt, [1, 1, 1, 0], 3),
        tf.math.unsorted_segment_max(rt, [0, 0, 0, 0], 1),
        tf.dynamic_partition(rt, [1, 0, 1, 1], 2),
        tf.dynamic_partition(rt, tf.ragged.constant([[0, 1, 0], [], [1, 1], [0]]), 2),
    ])
    assert got[0].to_list() == [[5.0, 7.0, 3.0], [-6.0]]
    mean = got[1].to_list()
    assert mean[0] == [-6.0] and mean[2] == []
    assert mean[1] == pytest.approx([2.5, 3.5, 3.0])
    assert got[2].to_list() == [[4.0, 5.0, 3.0]]
    assert [p.to_list() for p in got[3]] == [[[]], [ROWS[0], ROWS[2], ROWS[3]]]
    assert [p.tolist() for p in got[4]] == [[1.0, 3.0, -6.0], [2.0, 4.0, 5.0]]
    with pytest.raises(TypeError, match="num_partitions must be a non-negative integer"):
        tf.dynamic_partition(rt, [0, 0, 0, 0], tf.constant(1))


def test_nest_opens_ragged_and_sparse_specs():
    spec = tf.RaggedTensorSpec([2, None, 3], tf.float32, ragged_rank=1)
    flat = tf.nest.flatten(spec, expand_composites=True)
    assert [(s.shape.as_list(), s.dtype) for s in flat] == [([None, 3], tf.float32),
                                                            ([3], tf.int64)]
    deep = tf.RaggedTensorSpec([None, None, None], tf.int32, ragged_rank=2,
                               row_splits_dtype=tf.int32)
    assert [(s.shape.as_list(), s.dtype) for s in
            tf.nest.flatten(deep, expand_composites=True)] == [([None], tf.int32),
                                                               ([None], tf.int32),
                                                               ([None], tf.int32)]
    sparse = tf.SparseTensorSpec([4, 5], tf.int32)
    assert [(s.shape.as_list(), s.dtype) for s in
            tf.nest.flatten(sparse, expand_composites=True)] == [([None, 2], tf.int64),
                                                                 ([None], tf.int32),
                                                                 ([2], tf.int64)]
    assert tf.nest.flatten(spec) == [spec]
    rt = tf.nest.pack_sequence_as(spec, [tf.zeros([4, 3]), tf.constant([0, 1, 4], tf.int64)],
                                  expand_composites=True)
    assert isinstance(rt, tf.RaggedTensor) and rt.shape.as_list() == [2, None, 3]
    value = tf.nest.pack_sequence_as(
        sparse, [np.array([[0, 1]]), np.array([3], np.int32), np.array([4, 5])],
        expand_composites=True)
    assert isinstance(value, tf.SparseTensorValue) and value.values.tolist() == [3]
