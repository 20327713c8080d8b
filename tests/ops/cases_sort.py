"""NumPy-checked cases for top_k, sort and argsort (ties keep the lower index first)."""

import numpy as np

import tensorflux as tf
from tensorflux._src.ops.array.sort_ops import top_k
from tests.ops.harness import Case, uniform

# Small integers make many ties, which checks that the order is stable. The gradient
# checks use distinct values instead: at a tie, sorting is not differentiable.
TIES = uniform(-3, 3)
REAL = (np.float32, np.float64, np.int32, np.int64)


def np_top_k(x, k):
    idx = np.argsort(-x.astype(np.float64), axis=-1, kind="stable")[..., :k]
    return [np.take_along_axis(x, idx, -1), idx.astype(np.int32)]


def np_argsort(x, axis=-1, descending=False):
    key = -x.astype(np.float64) if descending else x
    return np.argsort(key, axis=axis, kind="stable").astype(np.int32)


CASES = [
    Case("TopKV2", lambda x: top_k(x, 3), lambda x: np_top_k(x, 3), [((7,),), ((2, 5),)],
         REAL + (np.uint8,), gen=TIES, grad_gen=uniform()),
    Case("TopKV2", lambda x: top_k(x, 0), lambda x: np_top_k(x, 0), [((2, 4),)], (np.float32,),
         name="TopKV2(k=0)"),
    Case("TopKV2", tf.sort, lambda x: np.sort(x, -1), [((3, 6),)], REAL + (np.uint8,),
         gen=TIES, grad_gen=uniform(), name="sort"),
    Case("TopKV2", lambda x: tf.sort(x, axis=0, direction="DESCENDING"),
         lambda x: -np.sort(-x, 0), [((5, 3, 2),)], (np.float32, np.int32), gen=TIES,
         grad_gen=uniform(), name="sort(axis=0, DESCENDING)"),
    # argsort has only an int output (nothing to differentiate), so its inputs are ints
    # here; float argsort is checked in test_array_errors.py.
    Case("TopKV2", tf.argsort, np_argsort, [((3, 6),)], (np.int32, np.int8, np.uint16),
         gen=TIES, name="argsort"),
    Case("TopKV2", lambda x: tf.argsort(x, axis=1, direction="DESCENDING"),
         lambda x: np_argsort(x, 1, True), [((2, 5, 3),)], (np.int64,), gen=TIES,
         name="argsort(axis=1, DESCENDING)"),
]
