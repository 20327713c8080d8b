"""`approx_max_k` / `approx_min_k` (TF's ApproxTopK op) and the `tf.math.in_top_k` alias.

ApproxTopK lowers to XLA's ApproxTopK through `jax.lax.approx_max_k`/`approx_min_k`: on
TPU it trades recall for speed, elsewhere (CPU, GPU) XLA computes the exact top k, which
is a valid answer for any recall target. With aggregate_to_topk=False the result size is
XLA's (taken from JAX's shape rule). The gradient scatters the values' gradient back to
the positions the indices name, as TF's does.
"""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.array import array_ops as A
from tensorflux._src.ops.array import gather_ops as G
from tensorflux._src.ops.math import math_ops as M
from tensorflux._src.ops.math import reduce_ops as R
from tensorflux._src.ops.nn.nn_ops import in_top_k  # noqa: F401 - tf.math.in_top_k in TF1
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import with_rank_at_least
from tensorflux._src.ops.registry import OpDef, REQUIRED, register

__all__ = ["approx_max_k", "approx_min_k", "approx_top_k", "in_top_k"]

ApproxTopK = collections.namedtuple("ApproxTopK", ["values", "indices"])


def _reduction_axis(op, rank):
    axis = op.get_attr("reduction_dimension")
    if not -rank <= axis < rank:
        raise ValueError(f"Invalid reduction dimension {axis} for input of rank {rank}")
    return axis % rank


def _approx_top_k(x, k, reduction_dimension, recall_target, is_max_k,
                  reduction_input_size_override, aggregate_to_topk):
    fn = jax.lax.approx_max_k if is_max_k else jax.lax.approx_min_k
    values, indices = fn(x, k, reduction_dimension=reduction_dimension % x.ndim,
                         recall_target=recall_target,
                         reduction_input_size_override=reduction_input_size_override,
                         aggregate_to_topk=aggregate_to_topk)
    return values, indices.astype(jnp.int32)


def _approx_top_k_shape(op):
    x = with_rank_at_least(op.inputs[0].shape, 1)
    if x.ndims is None:
        return [unknown_shape(), unknown_shape()]
    axis = _reduction_axis(op, x.ndims)
    k = op.get_attr("k")
    n = x.dims[axis].value
    if k < 0:
        raise ValueError(f"k must be non-negative, got {k}")
    if n is not None and n < k:
        raise ValueError(f"input must have last dimension >= k = {k} but was {n}")
    dims = x.as_list()
    if op.get_attr("aggregate_to_topk"):
        dims[axis] = k
    elif x.is_fully_defined():  # XLA's approximate size (its own platform rule)
        attrs = {a: op.get_attr(a) for a in ("k", "reduction_dimension", "recall_target",
                                             "is_max_k", "reduction_input_size_override",
                                             "aggregate_to_topk")}
        out = jax.eval_shape(lambda v: _approx_top_k(v, **attrs),
                             jax.ShapeDtypeStruct(x.as_list(), jnp.float32))
        dims = list(out[0].shape)
    else:
        dims[axis] = None
    return [TensorShape(dims), TensorShape(dims)]


def _approx_top_k_grad(op, dvalues, dindices=None):
    # One-hot rows of the indices along the reduction axis, weighted by the gradient.
    x, indices = op.inputs[0], op.outputs[1]
    rank = x.shape.ndims
    axis = _reduction_axis(op, rank)
    n = A.shape(x)[axis]
    hot = G.one_hot(indices, n, axis=axis + 1, dtype=dvalues.dtype.base_dtype)
    return [R.reduce_sum(M.multiply(A.expand_dims(dvalues, axis + 1), hot), axis=axis)]


register(OpDef("ApproxTopK", inputs=("input: T",), outputs=("values: T", "indices: int32"),
               attrs={"T": (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32),
                      "k": REQUIRED, "reduction_dimension": -1, "recall_target": 0.95,
                      "is_max_k": True, "reduction_input_size_override": -1,
                      "aggregate_to_topk": True},
               shape=_approx_top_k_shape, lower=_approx_top_k, grad=_approx_top_k_grad))


def approx_top_k(input, k, reduction_dimension=-1, recall_target=0.95,  # noqa: A002
                 is_max_k=True, reduction_input_size_override=-1, aggregate_to_topk=True,
                 name=None):
    """The k largest (or, with is_max_k=False, smallest) entries along
    `reduction_dimension` and their int32 indices, at least `recall_target` of them
    exact; here always all of them off TPU."""
    values, indices = apply_op(
        "ApproxTopK", name=name, input=input, k=k, reduction_dimension=reduction_dimension,
        recall_target=recall_target, is_max_k=is_max_k,
        reduction_input_size_override=reduction_input_size_override,
        aggregate_to_topk=aggregate_to_topk)
    return ApproxTopK(values, indices)


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """(values, indices) of the k largest entries along `reduction_dimension`."""
    return approx_top_k(operand, k, reduction_dimension, recall_target, True,
                        reduction_input_size_override, aggregate_to_topk, name)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """(values, indices) of the k smallest entries along `reduction_dimension`."""
    return approx_top_k(operand, k, reduction_dimension, recall_target, False,
                        reduction_input_size_override, aggregate_to_topk, name)
