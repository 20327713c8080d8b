"""tf.edit_distance: Levenshtein distances between the sequences of two SparseTensors.

A host op (NumPy kernel): it works on any element type, strings included, and its
output shape comes from the dense shapes' values. The last sparse dimension holds the
sequences; the others index them. As TF's kernel (which assumes row-major sorted
indices): output shape is the elementwise max of both dense shapes without their last
dim; where only a hypothesis exists the result is its length (normalize: length / 0,
inf); where only a truth exists, its length (normalize: 1.0); where neither, 0.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import ANY, dims_str, kernel_error, with_rank
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import static_value

__all__ = ["edit_distance"]


def _validate_sparse(indices, values, shape):
    """TF's ValidateSparseTensor shape-function checks."""
    indices, values, shape = (with_rank(s, r) for s, r in ((indices, 2), (values, 1),
                                                            (shape, 1)))
    n_index, n_values = indices.dims[0].value, values.dims[0].value
    if n_index is not None and n_values is not None and n_index != n_values:
        raise ValueError(f"Number of elements in index ({n_index}) and values ({n_values}) "
                         f"do not match.")
    index_rank, shape_rank = indices.dims[1].value, shape.dims[0].value
    if index_rank is not None and shape_rank is not None and index_rank != shape_rank:
        raise ValueError(f"Index rank ({index_rank}) and shape rank ({shape_rank}) do not "
                         f"match.")


def _edit_distance_shape(op):
    shapes = [t.shape for t in op.inputs]
    _validate_sparse(*shapes[:3])
    _validate_sparse(*shapes[3:])
    h, t = static_value(op.inputs[2]), static_value(op.inputs[5])
    if h is None or t is None:
        return unknown_shape()
    if h.size != t.size:
        raise ValueError(f"Num elements of hypothesis_shape does not match truth_shape: "
                         f"{h.size} vs. {t.size}")
    return TensorShape([max(int(a), int(b)) for a, b in zip(h[:-1], t[:-1])])


def _validate(hi, hv, hs, ti, tv, ts):
    """TF's kernel checks (EditDistanceOp::ValidateShapes)."""
    for label, a, rank in (("hypothesis_indices", hi, 2), ("truth_indices", ti, 2),
                           ("hypothesis_values", hv, 1), ("truth_values", tv, 1),
                           ("hypothesis_shape", hs, 1), ("truth_shape", ts, 1)):
        if a.ndim != rank:
            kind = "matrix" if rank == 2 else "vector"
            raise kernel_error(f"{label} should be a {kind}, but got shape: "
                               f"{dims_str(a.shape)}")
    if hs.size != hi.shape[1]:
        raise kernel_error(f"Expected hypothesis_shape.NumElements == #cols(hypothesis_indices), "
                           f"their shapes are: {dims_str(hs.shape)} and {dims_str(hi.shape)}")
    if ts.size < 2:
        raise kernel_error(f"Input SparseTensors must have rank at least 2, but truth_shape "
                           f"rank is: {ts.size}")
    if ts.size != ti.shape[1]:
        raise kernel_error(f"Expected truth_shape.NumElements == #cols(truth_indices), their "
                           f"shapes are: {dims_str(ts.shape)} and {dims_str(ti.shape)}")
    if ts.size != hs.size:
        raise kernel_error(f"Expected truth and hypothesis to have matching ranks, but their "
                           f"shapes are: {dims_str(ts.shape)} and {dims_str(hs.shape)}")


def _groups(indices, values):
    """{coordinates without the last: [values in index order]} (insertion-ordered)."""
    groups = {}
    for row, value in zip(indices, values):
        groups.setdefault(tuple(int(i) for i in row[:-1]), []).append(value)
    return groups


def levenshtein(a, b):
    """Insertions, deletions and substitutions turning sequence a into b."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (0 if x == y else 1)))
        previous = current
    return previous[-1]


def _edit_distance_kernel(hypothesis_indices, hypothesis_values, hypothesis_shape,
                          truth_indices, truth_values, truth_shape, normalize):
    _validate(hypothesis_indices, hypothesis_values, hypothesis_shape, truth_indices,
              truth_values, truth_shape)
    out_shape = [max(int(a), int(b)) for a, b in zip(hypothesis_shape[:-1], truth_shape[:-1])]
    out = np.zeros(out_shape, np.float32)
    hyp = _groups(hypothesis_indices, hypothesis_values)
    truth = _groups(truth_indices, truth_values)
    with np.errstate(divide="ignore"):
        for key in list(hyp) + [k for k in truth if k not in hyp]:
            h, t = hyp.get(key), truth.get(key)
            if h is not None and t is not None:
                d = np.float32(levenshtein(t, h))
                out[key] = d / np.float32(len(t)) if normalize else d
            elif h is not None:  # no truth: TF divides the length by 0
                out[key] = np.float32(len(h)) / np.float32(0) if normalize else len(h)
            else:
                out[key] = 1.0 if normalize else len(t)
    return out


register(OpDef(
    "EditDistance",
    inputs=("hypothesis_indices: int64", "hypothesis_values: T", "hypothesis_shape: int64",
            "truth_indices: int64", "truth_values: T", "truth_shape: int64"),
    outputs=("output: float",), attrs={"T": ANY + (_dtypes.string,), "normalize": True},
    shape=_edit_distance_shape, host=_edit_distance_kernel, not_differentiable=True))


def edit_distance(hypothesis, truth, normalize=True, name="edit_distance"):
    """Levenshtein distances between the sequences (last sparse dimension) of two
    SparseTensors, normalized by the truth's lengths when `normalize`."""
    if not isinstance(hypothesis, (SparseTensor, SparseTensorValue)):
        raise TypeError("Hypothesis must be a SparseTensor.")
    if not isinstance(truth, (SparseTensor, SparseTensorValue)):
        raise TypeError("Truth must be a SparseTensor.")
    return apply_op("EditDistance", name=name, hypothesis_indices=hypothesis.indices,
                    hypothesis_values=hypothesis.values,
                    hypothesis_shape=hypothesis.dense_shape, truth_indices=truth.indices,
                    truth_values=truth.values, truth_shape=truth.dense_shape,
                    normalize=normalize)
