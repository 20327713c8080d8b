"""NumPy-checked cases for tensor_scatter_nd_* (array family).

Indices are fed at run time; their range checks and duplicate handling are in
test_array_scatter.py. The update case uses distinct index rows (with repeats TF's
gradient gives every repeated update the gradient, though only one of them lands).
"""

import numpy as np

import tensorflux as tf
from tests.ops.harness import Case, uniform


def distinct_rows(limits):
    """Index rows without repeats, within `limits` (one row per leading position)."""
    def make(rng, shape, dtype):
        n = int(np.prod(shape[:-1]))
        flat = rng.permutation(int(np.prod(limits)))[:n]
        return np.stack(np.unravel_index(flat, limits), -1).reshape(shape).astype(dtype)
    return make


def rows(limits):
    """Index rows with possible repeats."""
    def make(rng, shape, dtype):
        cols = [rng.integers(0, lim, size=shape[:-1]) for lim in limits]
        return np.stack(cols, -1).astype(dtype)
    return make


def np_scatter(tensor, indices, updates, how):
    out = tensor.copy()
    k = indices.shape[-1]
    rows_ = indices.reshape(-1, k)
    ups = updates.reshape((rows_.shape[0],) + tensor.shape[k:])
    for r, u in zip(rows_, ups):
        at = tuple(r)
        if how == "update":
            out[at] = u
        elif how == "add":
            out[at] = out[at] + u
        elif how == "sub":
            out[at] = out[at] - u
        elif how == "max":
            out[at] = np.maximum(out[at], u)
        else:
            out[at] = np.minimum(out[at], u)
    return out


DT = [(np.float32, np.int32, np.float32), (np.int64, np.int64, np.int64)]
DTF = DT[:1]

CASES = [
    Case("TensorScatterUpdate", tf.tensor_scatter_nd_update,
         lambda t, i, u: np_scatter(t, i, u, "update"), [((5, 3), (2, 2, 1), (2, 2, 3))], DT,
         gen=[uniform(), distinct_rows((5,)), uniform()], grad_inputs=[0, 2]),
    Case("TensorScatterUpdate", tf.tensor_scatter_update,
         lambda t, i, u: np_scatter(t, i, u, "update"), [((4, 3), (3, 2), (3,))], DTF,
         gen=[uniform(), distinct_rows((4, 3)), uniform()], grad_inputs=[0, 2],
         name="TensorScatterUpdate(elements, tf.tensor_scatter_update)"),
    Case("TensorScatterAdd", tf.tensor_scatter_nd_add,
         lambda t, i, u: np_scatter(t, i, u, "add"), [((4, 2), (5, 1), (5, 2))], DT,
         gen=[uniform(), rows((4,)), uniform()], grad_inputs=[0, 2]),
    Case("TensorScatterSub", tf.tensor_scatter_sub,
         lambda t, i, u: np_scatter(t, i, u, "sub"), [((3, 4), (4, 2), (4,))], DTF,
         gen=[uniform(), rows((3, 4)), uniform()], grad_inputs=[0, 2]),
    Case("TensorScatterMax", tf.tensor_scatter_nd_max,
         lambda t, i, u: np_scatter(t, i, u, "max"), [((5, 2), (4, 1), (4, 2))], DT,
         gen=[uniform(), rows((5,)), uniform()], grad_inputs=[0, 2]),
    Case("TensorScatterMin", tf.tensor_scatter_nd_min,
         lambda t, i, u: np_scatter(t, i, u, "min"), [((6,), (4, 1), (4,))], DTF,
         gen=[uniform(), distinct_rows((6,)), uniform()], grad_inputs=[0, 2]),
]
