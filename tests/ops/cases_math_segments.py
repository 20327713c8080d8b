"""NumPy-checked cases for the segment reductions (ops/math/segment_reductions.py and
sparse_segments.py). The expectations loop over segments in NumPy; ids are fixed
patterns with empty segments (and negative ids for the unsorted ops, which drop them).
"""

import numpy as np

import tensorflux as tf
from tensorflux._src.ops.op_builder import apply_op
from tests.ops.harness import Case, fixed, uniform


SORTED = [0, 0, 2, 2, 3]  # segment 1 empty
UNSORTED = [3, -1, 0, 3, 0, -2]  # segments 1 and 2 of 4 empty; rows 1 and 5 dropped
# For gradients every segment gets a row (an empty max is the dtype's lowest value, whose
# finite differences overflow); row 1 is still dropped and segment 3 has two rows.
UNSORTED_FOR_GRAD = [3, -1, 0, 3, 2, 1]
INDICES = [3, 0, 1, 3, 2, 0]
SPARSE_IDS = [0, 0, 0, 2, 2, 3]


def reduce_segments(data, ids, num, fn, empty):
    out = np.full((num,) + data.shape[1:], empty, data.dtype)
    for s in range(num):
        rows = data[ids == s]
        if len(rows):
            out[s] = fn(rows, axis=0)
    return out


def known_rows(fn, rows):
    """The op's output with its row count set: it depends on the ids' values, so the
    static shape is [?, ...] (test_math_segments.py checks that); the harness compares
    fully known shapes."""
    def build(*args):
        out = fn(*args)
        out.set_shape([rows] + out.shape.as_list()[1:])
        return out
    return build


def sorted_expect(fn, empty=0):
    return lambda data, ids: reduce_segments(data, ids, int(ids[-1]) + 1, fn, empty)


def unsorted_expect(fn, empty):
    def expect(data, ids):
        value = empty(data.dtype) if callable(empty) else empty
        return reduce_segments(data, ids, 4, fn, value)
    return expect


def lowest(dtype):
    return np.iinfo(dtype).min if np.dtype(dtype).kind == "i" else np.finfo(dtype).min


def highest(dtype):
    return np.iinfo(dtype).max if np.dtype(dtype).kind == "i" else np.finfo(dtype).max


def sparse_expect(kind, num=None):
    def expect(data, indices, ids):
        rows = int(ids[-1]) + 1 if num is None else num
        out = np.zeros((rows,) + data.shape[1:], data.dtype)
        for s in range(rows):
            picked = data[indices[ids == s]]
            if len(picked):
                total = picked.sum(axis=0)
                scale = {"sum": 1, "mean": len(picked), "sqrtn": np.sqrt(len(picked))}[kind]
                out[s] = total / scale if kind != "sum" else total
        return out
    return expect


def sparse_grad_expect(kind):
    def expect(grad, indices, ids):
        counts = np.maximum(np.bincount(ids, minlength=grad.shape[0]), 1).astype(grad.dtype)
        scale = 1 / (counts if kind == "mean" else np.sqrt(counts))
        out = np.zeros((4,) + grad.shape[1:], grad.dtype)
        for i, s in zip(indices, ids):
            out[i] += grad[s] * scale[s]
        return out
    return expect


SEG = [((5, 2), (5,))]
SEG_TYPES = [(np.float32, np.int32), (np.float64, np.int64)]
SEG_GEN = [uniform(), fixed(SORTED)]
UNSEG = [((6, 2), (6,))]
UNS_GEN = [uniform(), fixed(UNSORTED)]
UNS_GRAD_GEN = [uniform(), fixed(UNSORTED_FOR_GRAD)]
SPARSE = [((4, 2), (6,), (6,))]
SPARSE_GEN = [uniform(), fixed(INDICES), fixed(SPARSE_IDS)]
SPARSE_TYPES = [(np.float32, np.int32, np.int32), (np.float64, np.int64, np.int32)]

CASES = [
    Case("SegmentSum", known_rows(tf.math.segment_sum, 4), sorted_expect(np.sum), SEG,
         SEG_TYPES + [(np.int32, np.int32)], gen=SEG_GEN),
    Case("SegmentMean", known_rows(tf.math.segment_mean, 4), sorted_expect(np.mean), SEG,
         SEG_TYPES, gen=SEG_GEN),
    Case("SegmentProd", known_rows(tf.math.segment_prod, 4), sorted_expect(np.prod, 1), SEG,
         SEG_TYPES, gen=SEG_GEN),
    Case("SegmentMin", known_rows(tf.math.segment_min, 4), sorted_expect(np.min), SEG,
         SEG_TYPES, gen=SEG_GEN),
    Case("SegmentMax", known_rows(tf.segment_max, 4), sorted_expect(np.max), SEG,
         SEG_TYPES + [(np.int64, np.int32)], gen=SEG_GEN),
    Case("UnsortedSegmentMax", lambda d, i: tf.math.unsorted_segment_max(d, i, 4),
         unsorted_expect(np.max, lowest), UNSEG, SEG_TYPES + [(np.int32, np.int32)],
         gen=UNS_GEN, grad_gen=UNS_GRAD_GEN),
    Case("UnsortedSegmentMin", lambda d, i: tf.unsorted_segment_min(d, i, 4),
         unsorted_expect(np.min, highest), UNSEG, SEG_TYPES + [(np.int32, np.int32)],
         gen=UNS_GEN, grad_gen=UNS_GRAD_GEN),
    Case("UnsortedSegmentProd", lambda d, i: tf.math.unsorted_segment_prod(d, i, 4),
         unsorted_expect(np.prod, 1), UNSEG, SEG_TYPES, gen=UNS_GEN),
    Case("SparseSegmentSum", known_rows(tf.sparse_segment_sum, 4), sparse_expect("sum"),
         SPARSE, SPARSE_TYPES + [(np.int32, np.int32, np.int32)], gen=SPARSE_GEN),
    Case("SparseSegmentMean", known_rows(tf.sparse_segment_mean, 4), sparse_expect("mean"),
         SPARSE, SPARSE_TYPES, gen=SPARSE_GEN),
    Case("SparseSegmentSqrtN", known_rows(tf.sparse_segment_sqrt_n, 4),
         sparse_expect("sqrtn"), SPARSE, SPARSE_TYPES, gen=SPARSE_GEN),
    Case("SparseSegmentSumWithNumSegments",
         lambda d, i, s: tf.sparse_segment_sum(d, i, s, num_segments=6),
         sparse_expect("sum", 6), SPARSE, SPARSE_TYPES, gen=SPARSE_GEN),
    Case("SparseSegmentMeanWithNumSegments",
         lambda d, i, s: tf.sparse_segment_mean(d, i, s, num_segments=6),
         sparse_expect("mean", 6), SPARSE, SPARSE_TYPES, gen=SPARSE_GEN),
    Case("SparseSegmentSqrtNWithNumSegments",
         lambda d, i, s: tf.sparse_segment_sqrt_n(d, i, s, num_segments=6),
         sparse_expect("sqrtn", 6), SPARSE, SPARSE_TYPES, gen=SPARSE_GEN),
    # TF's gradient kernels (no gradient of their own in TF).
    Case("SparseSegmentMeanGrad",
         lambda g, i, s: apply_op("SparseSegmentMeanGrad", grad=g, indices=i, segment_ids=s,
                                  output_dim0=4),
         sparse_grad_expect("mean"), [((4, 2), (6,), (6,))], SPARSE_TYPES, gen=SPARSE_GEN,
         grad=False),
    Case("SparseSegmentSqrtNGrad",
         lambda g, i, s: apply_op("SparseSegmentSqrtNGrad", grad=g, indices=i, segment_ids=s,
                                  output_dim0=4),
         sparse_grad_expect("sqrtn"), [((4, 2), (6,), (6,))], SPARSE_TYPES, gen=SPARSE_GEN,
         grad=False),
]
