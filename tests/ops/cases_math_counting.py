"""NumPy/SciPy-checked cases for Bincount, AccumulateNV2, CumulativeLogsumexp, ApproxTopK
and SobolSample (ops/math/counting.py, accumulate.py, approx_topk.py, sobol.py)."""

import warnings

import numpy as np
from scipy.stats import qmc

import tensorflux as tf
from tests.ops.harness import Case, fixed, uniform


def with_length(fn, n):
    """The op's output with its length set: Bincount's depends on the values (its static
    shape is [?]; test_math_counting.py checks that), the harness compares known shapes."""
    def build(*args):
        out = fn(*args)
        out.set_shape([n])
        return out
    return build


ARR = [[1, 3, 3], [0, 4, 3]]


def lse_scan(x, axis, exclusive=False, reverse=False):
    """log(cumsum(exp(x))) in NumPy; exclusive scans start from the dtype's lowest value."""
    x = np.flip(x, axis) if reverse else x
    out = np.logaddexp.accumulate(x.astype(np.float64), axis=axis)
    if exclusive:
        lowest = np.full_like(np.take(out, [0], axis=axis), np.finfo(x.dtype).min)
        out = np.concatenate([lowest, np.delete(out, -1, axis=axis)], axis=axis)
    out = np.flip(out, axis) if reverse else out
    return out.astype(x.dtype)


def top_k_along(x, k, axis, largest=True):
    order = np.argsort(-x if largest else x, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx.astype(np.int32)


def sobol_reference(skip, dim=5, n=31):
    """SciPy's unscrambled Sobol points skip + 1 ... skip + n (TF skips the zero point)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # n not a power of 2
        return qmc.Sobol(dim, scramble=False).random(n + int(skip) + 1)[int(skip) + 1:]


CASES = [
    Case("Bincount", with_length(tf.math.bincount, 5),
         lambda a: np.bincount(a.ravel()).astype(np.int32), [((2, 3),)], (np.int32,),
         gen=fixed(ARR)),
    # Weighted, padded to minlength; the gradient reaches the weights (input 1).
    Case("Bincount", with_length(lambda a, w: tf.bincount(a, weights=w, minlength=7), 7),
         lambda a, w: np.bincount(a.ravel(), w.ravel(), minlength=7).astype(w.dtype),
         [((2, 3), (2, 3))], [(np.int32, np.float32), (np.int32, np.float64)],
         gen=[fixed(ARR), uniform()], name="Bincount(weights, minlength)"),
    Case("AccumulateNV2", lambda a, b, c: tf.math.accumulate_n([a, b, c]),
         lambda a, b, c: a + b + c, [((2, 3),) * 3], (np.float32, np.int32)),
    Case("CumulativeLogsumexp", lambda x: tf.math.cumulative_logsumexp(x, axis=1),
         lambda x: lse_scan(x, 1), [((2, 4),)], (np.float32, np.float64)),
    # Through exp, so the exclusive scan's lowest value becomes 0 in the gradient check.
    Case("CumulativeLogsumexp",
         lambda x: tf.exp(tf.math.cumulative_logsumexp(x, axis=0, exclusive=True,
                                                       reverse=True)),
         lambda x: np.exp(lse_scan(x, 0, exclusive=True, reverse=True)), [((3, 2),)],
         (np.float32, np.float64), gen=uniform(-2, 2),
         name="CumulativeLogsumexp(exclusive, reverse)"),
    # No float64 kernel in TF: the gradient is checked in test_math_counting.py.
    Case("ApproxTopK", lambda x: list(tf.math.approx_max_k(x, 3)),
         lambda x: list(top_k_along(x, 3, -1)), [((2, 6),)], (np.float32,), grad=False),
    Case("ApproxTopK", lambda x: list(tf.math.approx_min_k(x, 2, reduction_dimension=0)),
         lambda x: list(top_k_along(x, 2, 0, largest=False)), [((5, 3),)], (np.float32,),
         grad=False, name="ApproxTopK(min, axis 0)"),
    Case("SobolSample", lambda skip: tf.math.sobol_sample(5, 31, skip),
         lambda skip: sobol_reference(skip).astype(np.float32), [((),)], (np.int32,),
         gen=fixed(4)),
    Case("SobolSample", lambda skip: tf.math.sobol_sample(3, 8, skip, dtype=tf.float64),
         lambda skip: sobol_reference(skip, 3, 8), [((),)], (np.int32,), gen=fixed(0),
         name="SobolSample(float64)"),
]
