"""NumPy-checked cases for the sparse and ragged records whose outputs have static shapes
(compiled records, and host records whose output shape the dense shape fixes). The
SparseTensors are built from fed index placeholders (fixed patterns) and fed values; the
expectations densify with NumPy. Host records with data-dependent sizes are checked in
tests/ops/test_sparse_*.py and tests/ops/test_ragged.py.
"""

import numpy as np

import tensorflux as tf
from tensorflux._src.ops.op_builder import apply_op
from tests.ops.harness import Case, fixed, nonzero, uniform

SHAPE = [3, 3]
IDX = [[0, 1], [1, 0], [1, 2], [2, 2]]  # row-major
UNSORTED = [[1, 2], [0, 1], [2, 2], [1, 0]]
FLOATS = [(np.int64, np.float32), (np.int64, np.float64)]
FLOATS3 = [(np.int64, np.float32, np.float32), (np.int64, np.float64, np.float64)]


def dense(idx, vals, shape=SHAPE, default=0):
    out = np.full(shape, default, vals.dtype)
    for i, v in zip(idx, vals):
        out[tuple(i)] = v
    return out


def sp(idx, vals, shape=SHAPE):
    return tf.SparseTensor(idx, vals, shape)


def row_softmax(idx, vals):
    out = np.empty_like(vals)
    for r in set(int(i[0]) for i in idx):
        rows = idx[:, 0] == r
        e = np.exp(vals[rows] - vals[rows].max())
        out[rows] = e / e.sum()
    return out


def reduce_max_present(idx, vals):
    out = np.zeros(3, vals.dtype)
    for r in range(3):
        rows = idx[:, 0] == r
        if rows.any():
            out[r] = vals[rows].max()
    return out


def fill_grad(rmap, grad):
    picked = grad[rmap]
    return picked, np.asarray(grad.sum() - picked.sum(), grad.dtype)


def sum_positions(bp, a_idx, b_idx, s_idx):
    where = {tuple(r): k for k, r in enumerate(s_idx.tolist())}
    return tuple(np.array([bp[where[tuple(r)]] if tuple(r) in where else 0
                           for r in x.tolist()], bp.dtype) for x in (a_idx, b_idx))


def slice_grad(bp, in_idx, start, out_idx):
    where = {tuple(r): k for k, r in enumerate(out_idx.tolist())}
    return np.array([bp[where[tuple(r)]] if tuple(r) in where else 0
                     for r in (in_idx - start).tolist()], bp.dtype)


def to_tensor_expect(vals):
    splits = [0, 2, 2, 5]
    out = np.full([3, 3], -1, vals.dtype)
    for r in range(3):
        row = vals[splits[r]:splits[r + 1]]
        out[r, :len(row)] = row
    return out


def reordered(i, v):
    out = tf.sparse.reorder(sp(i, v))
    return [out.indices, out.values]


def known(fn, shape):
    def build(*args):
        out = fn(*args)
        out.set_shape(shape)
        return out
    return build


IDX_GEN = fixed(IDX)
CASES = [
    Case("SparseTensorDenseMatMul",
         lambda i, v, b: tf.sparse.sparse_dense_matmul(sp(i, v), b),
         lambda i, v, b: dense(i, v) @ b, [((4, 2), (4,), (3, 2))], FLOATS3,
         gen=[IDX_GEN, uniform(), uniform()]),
    Case("SparseTensorDenseMatMul",
         lambda i, v, b: tf.sparse_tensor_dense_matmul(sp(i, v), b, adjoint_a=True,
                                                       adjoint_b=True),
         lambda i, v, b: dense(i, v).T @ b.T, [((4, 2), (4,), (2, 3))], FLOATS3,
         gen=[IDX_GEN, uniform(), uniform()], name="SparseTensorDenseMatMul_adjoint"),
    Case("SparseTensorDenseAdd", lambda i, v, b: tf.sparse.add(sp(i, v), b),
         lambda i, v, b: dense(i, v) + b, [((4, 2), (4,), (3, 3))],
         FLOATS3 + [(np.int64, np.int32, np.int32)], gen=[IDX_GEN, uniform(), uniform()]),
    Case("SparseToDense", lambda i, v: tf.sparse.to_dense(sp(i, v)),
         lambda i, v: dense(i, v), [((4, 2), (4,))], FLOATS + [(np.int64, np.int32)],
         gen=[IDX_GEN, uniform()]),
    Case("SparseToDense",
         lambda i, v: tf.sparse_to_dense(i, [3, 3], v, default_value=-1),
         lambda i, v: dense(i, v, default=-1), [((4, 2), (4,))], FLOATS,
         gen=[IDX_GEN, uniform()], name="SparseToDense_default"),
    Case("SparseReorder", reordered,
         lambda i, v: (i[np.lexsort(i.T[::-1])], v[np.lexsort(i.T[::-1])]),
         [((4, 2), (4,))], FLOATS, gen=[fixed(UNSORTED), uniform()]),
    Case("SparseSoftmax", lambda i, v: tf.sparse.softmax(sp(i, v)).values, row_softmax,
         [((4, 2), (4,))], FLOATS, gen=[IDX_GEN, uniform()]),
    Case("SparseDenseCwiseMul", lambda i, v, d: (sp(i, v) * d).values,
         lambda i, v, d: v * d[i[:, 1]], [((4, 2), (4,), (3,))], FLOATS3,
         gen=[IDX_GEN, uniform(), uniform()]),
    Case("SparseDenseCwiseDiv", lambda i, v, d: (sp(i, v) / d).values,
         lambda i, v, d: v / d[i[:, 1]], [((4, 2), (4,), (3,))], FLOATS3,
         gen=[IDX_GEN, uniform(), nonzero()]),
    Case("SparseReduceSum", lambda i, v: tf.sparse.reduce_sum(sp(i, v), axis=1),
         lambda i, v: dense(i, v).sum(axis=1), [((4, 2), (4,))], FLOATS,
         gen=[IDX_GEN, uniform()]),
    Case("SparseReduceMax", lambda i, v: tf.sparse_reduce_max(sp(i, v), 1),
         reduce_max_present, [((4, 2), (4,))], FLOATS, gen=[IDX_GEN, uniform()],
         grad=False),
    Case("SparseMatMul", lambda a, b: tf.sparse_matmul(a, b, transpose_b=True,
                                                       a_is_sparse=True),
         lambda a, b: (a @ b.T).astype(np.float32), [((2, 3), (4, 3))], [np.float32],
         grad=False),
    # Gradient records (no gradients of their own, as in TF).
    Case("SparseFillEmptyRowsGrad",
         lambda m, g: apply_op("SparseFillEmptyRowsGrad", reverse_index_map=m, grad_values=g),
         fill_grad, [((3,), (5,))], FLOATS, gen=[fixed([0, 2, 3]), uniform()], grad=False),
    Case("RaggedFillEmptyRowsGrad",
         lambda m, g: tf.ragged_fill_empty_rows_grad(m, g),
         fill_grad, [((3,), (5,))], FLOATS, gen=[fixed([1, 2, 4]), uniform()], grad=False),
    Case("SparseAddGrad",
         lambda g, a, b, s: apply_op("SparseAddGrad", backprop_val_grad=g, a_indices=a,
                                     b_indices=b, sum_indices=s),
         sum_positions, [((3,), (2, 2), (2, 2), (3, 2))],
         [(np.float32, np.int64, np.int64, np.int64), (np.float64, np.int64, np.int64,
                                                       np.int64)],
         gen=[uniform(), fixed([[0, 0], [1, 1]]), fixed([[0, 0], [2, 0]]),
              fixed([[0, 0], [1, 1], [2, 0]])], grad=False),
    Case("SparseSliceGrad",
         lambda g, i, st, o: apply_op("SparseSliceGrad", backprop_val_grad=g, input_indices=i,
                                      input_start=st, output_indices=o),
         slice_grad, [((2,), (4, 2), (2,), (2, 2))],
         [(np.float32, np.int64, np.int64, np.int64), (np.float64, np.int64, np.int64,
                                                       np.int64)],
         gen=[uniform(), IDX_GEN, fixed([1, 0]), fixed([[0, 0], [0, 2]])], grad=False),
    Case("RaggedTensorToTensor",
         lambda v: tf.RaggedTensor.from_row_splits(v, [0, 2, 2, 5]).to_tensor(-1,
                                                                              shape=[3, 3]),
         to_tensor_expect, [((5,),)], [np.float32, np.float64, np.int32]),
    Case("RaggedTensorToSparse",
         known(lambda v: tf.RaggedTensor.from_row_splits(v, [0, 2, 2, 5]).to_sparse().values,
               [5]),
         lambda v: v, [((5,),)], [np.float32, np.float64]),
]
