"""NumPy-checked cases for gather, gather_nd, scatter_nd and one_hot.

Indices are fed at run time here and are in range: the CPU kernels' errors for
out-of-range ones (known at compile time, or fed to gather) are checked in
test_array_errors.py.
"""

import numpy as np

import tensorflux as tf
from tensorflux._src.ops.math.segment_ops import unsorted_segment_sum
from tests.ops.harness import Case, ints, uniform


def np_gather(params, indices, axis=0):
    return np.take(params, indices, axis=axis)


def np_gather_batch(params, indices):  # batch_dims=1, axis=1
    return np.stack([np.take(p, i, axis=0) for p, i in zip(params, indices)])


def np_gather_batch_axis2(params, indices):  # batch_dims=1, axis=2
    return np.stack([np_gather(p, i, axis=1) for p, i in zip(params, indices)])


def np_unsorted_segment_sum(data, ids, n=4):
    out = np.zeros((n,) + data.shape[ids.ndim:], data.dtype)
    keep = ids >= 0  # negative ids drop their rows
    np.add.at(out, ids[keep], data[keep])
    return out


def np_gather_nd(params, indices):
    return params[tuple(np.moveaxis(indices, -1, 0))]


def np_scatter_nd(indices, updates, shape=(6, 2)):
    out = np.zeros(shape, updates.dtype)
    np.add.at(out, tuple(np.moveaxis(indices, -1, 0)), updates)
    return out


def np_one_hot(indices, depth, on=1.0, off=0.0, axis=-1, dtype=np.float32):
    out = np.where(indices[..., None] == np.arange(depth), on, off).astype(dtype)
    return np.moveaxis(out, -1, axis)


PI = [(np.float32, np.int32), (np.int64, np.int64)]

CASES = [
    Case("GatherV2", tf.gather, np_gather, [((5, 3), (4,)), ((5,), (2, 3))], PI,
         gen=[uniform(), ints(0, 4)]),
    Case("GatherV2", lambda p, i: tf.gather(p, i, axis=1), lambda p, i: np_gather(p, i, 1),
         [((2, 4, 3), (2, 2))], PI[:1], gen=[uniform(), ints(0, 3)], name="GatherV2(axis=1)"),
    Case("GatherV2", tf.gather, np_gather, [((4, 2), (6,))], PI[:1],
         gen=[uniform(), ints(0, 3)], name="GatherV2(repeated indices)"),
    Case("GatherV2", lambda p, i: tf.gather(p, i, axis=1, batch_dims=1), np_gather_batch,
         [((2, 4, 3), (2, 5))], PI[:1], gen=[uniform(), ints(0, 3)],
         name="GatherV2(batch_dims=1)"),
    Case("GatherV2", lambda p, i: tf.gather(p, i, axis=2, batch_dims=1), np_gather_batch_axis2,
         [((2, 3, 4, 2), (2, 5))], PI[:1], gen=[uniform(), ints(0, 3)],
         name="GatherV2(batch_dims=1, axis=2)"),
    Case("GatherV2", lambda p, i: tf.gather(p, i, axis=-1), lambda p, i: np_gather(p, i, 1),
         [((3, 4), (2, 3))], PI[:1], gen=[uniform(), ints(0, 3)], name="GatherV2(axis=-1)"),
    Case("UnsortedSegmentSum", lambda d, i: unsorted_segment_sum(d, i, 4),
         np_unsorted_segment_sum, [((6, 2), (6,)), ((2, 3, 2), (2, 3)), ((5,), (5,))],
         [(np.float32, np.int32), (np.float64, np.int64), (np.int32, np.int32)],
         gen=[uniform(), ints(-1, 3)]),
    Case("GatherNd", tf.gather_nd, np_gather_nd, [((4, 3), (5, 2)), ((4, 3, 2), (2, 2, 1))],
         PI, gen=[uniform(), ints(0, 2)]),
    Case("ScatterNd", lambda i, u: tf.scatter_nd(i, u, [6, 2]), np_scatter_nd,
         [((5, 1), (5, 2))], [(np.int32, np.float32), (np.int64, np.int32)],
         gen=[ints(0, 5), uniform()]),
    Case("ScatterNd", lambda i, u: tf.scatter_nd(i, u, [6, 2]), np_scatter_nd,
         [((4, 2), (4,))], [(np.int32, np.float64)], gen=[ints(0, 1), uniform()],
         name="ScatterNd(duplicates add)"),
    Case("OneHot", lambda i: tf.one_hot(i, 4), lambda i: np_one_hot(i, 4), [((5,),), ((2, 3),)],
         (np.int32, np.int64), gen=ints(-1, 4), out_dtype=np.float32),
    Case("OneHot", lambda i: tf.one_hot(i, 3, on_value=5, off_value=-1, axis=0),
         lambda i: np_one_hot(i, 3, 5, -1, 0, np.int32), [((2, 4),)], (np.uint8,),
         gen=ints(0, 3), out_dtype=np.int32, name="OneHot(axis=0, int values)"),
]
