"""Core `tf.nn` ops: activations, softmax, cross-entropy, bias_add (with gradients)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import unchanged

__all__ = ["relu", "softmax", "log_softmax", "bias_add", "softmax_cross_entropy_with_logits",
           "softmax_cross_entropy_with_logits_v2", "sparse_softmax_cross_entropy_with_logits"]

F = _dtypes.FLOATS


def _same_shape_pair(op):
    a, b = op.inputs[0].shape, op.inputs[1].shape
    if not a.is_compatible_with(b):
        raise ValueError(f"Shapes {a} and {b} are incompatible")
    return a.merge_with(b)


# -- relu -------------------------------------------------------------------------------
register(OpDef(
    "ReluGrad", inputs=("gradients: T", "features: T"), outputs=("backprops: T",),
    attrs={"T": _dtypes.REAL}, shape=_same_shape_pair,
    lower=lambda gradients, features: jnp.where(features > 0, gradients,
                                                jnp.zeros_like(gradients)),
    grad=lambda op, dy: [apply_op("ReluGrad", gradients=dy, features=op.inputs[1]), None],
))
register(OpDef(
    "Relu", inputs=("features: T",), outputs=("activations: T",), attrs={"T": _dtypes.REAL},
    shape=unchanged, lower=lambda features: jnp.maximum(features, 0),
    grad=lambda op, dy: [apply_op("ReluGrad", gradients=dy, features=op.outputs[0])],
))


def relu(features, name=None):
    """max(features, 0)."""
    return apply_op("Relu", name=name, features=features)


# -- softmax ------------------------------------------------------------------------------
def _softmax_grad(op, dy):
    # d softmax: s * (dy - sum(dy * s, -1, keepdims))
    from tensorflux._src.ops import reduce_ops
    s = op.outputs[0]
    return [(dy - reduce_ops.reduce_sum(dy * s, -1, keepdims=True)) * s]


def _log_softmax_grad(op, dy):
    from tensorflux._src.ops import math_ops, reduce_ops
    return [dy - reduce_ops.reduce_sum(dy, -1, keepdims=True) * math_ops.exp(op.outputs[0])]


def _rank_at_least_1(op):
    return op.inputs[0].shape.with_rank_at_least(1)


register(OpDef("Softmax", inputs=("logits: T",), outputs=("softmax: T",), attrs={"T": F},
               shape=_rank_at_least_1, lower=lambda logits: jax.nn.softmax(logits, axis=-1),
               grad=_softmax_grad))
register(OpDef("LogSoftmax", inputs=("logits: T",), outputs=("logsoftmax: T",),
               attrs={"T": F}, shape=_rank_at_least_1,
               lower=lambda logits: jax.nn.log_softmax(logits, axis=-1),
               grad=_log_softmax_grad))


def _along_last_axis(op_type, logits, axis, name):
    """TF's softmax ops work on the last axis; other axes are swapped there and back."""
    from tensorflux._src.ops import array_ops
    logits = convert_to_tensor(logits, name="logits")
    rank = logits.shape.ndims
    if axis is None or axis == -1 or (rank is not None and axis == rank - 1):
        return apply_op(op_type, name=name, logits=logits)
    if rank is None:
        raise ValueError(f"{op_type} along axis {axis} needs the rank of logits to be known")
    if not -rank <= axis < rank:
        raise ValueError(f"axis = {axis} is out of range for logits of rank {rank}")
    axis %= rank
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    with _graph.name_scope(name, op_type, [logits]) as scope:
        swapped = apply_op(op_type, logits=array_ops.transpose(logits, perm))
        return array_ops.transpose(swapped, perm, name=scope)


def softmax(logits, axis=None, name=None, dim=None):
    """exp(logits) / sum(exp(logits)) along `axis` (default: the last)."""
    return _along_last_axis("Softmax", logits, dim if axis is None else axis, name)


def log_softmax(logits, axis=None, name=None, dim=None):
    """logits - log(sum(exp(logits))) along `axis` (default: the last)."""
    return _along_last_axis("LogSoftmax", logits, dim if axis is None else axis, name)


# -- cross entropy ----------------------------------------------------------------------------
def _xent_shape(op):
    logits, labels = op.inputs[0].shape.with_rank(2), op.inputs[1].shape.with_rank(2)
    if not logits.is_compatible_with(labels):
        raise ValueError(f"logits and labels must be same size: logits_size={logits} "
                         f"labels_size={labels}")
    both = logits.merge_with(labels)
    return [TensorShape([both[0]]), both]


def _xent_lower(features, labels):
    log_p = jax.nn.log_softmax(features, axis=-1)
    loss = -jnp.sum(labels * log_p, axis=-1)
    return loss, jnp.exp(log_p) - labels


def _xent_grad(op, dloss, dbackprop):
    from tensorflux._src.ops import array_ops
    d = array_ops.expand_dims(dloss, -1)
    grad_logits = d * op.outputs[1]
    grad_labels = d * -apply_op("LogSoftmax", logits=op.inputs[0])
    return [grad_logits, grad_labels]


register(OpDef(
    "SoftmaxCrossEntropyWithLogits", inputs=("features: T", "labels: T"),
    outputs=("loss: T", "backprop: T"), attrs={"T": F}, shape=_xent_shape,
    lower=_xent_lower, grad=_xent_grad,
))


def softmax_cross_entropy_with_logits_v2(_sentinel=None, labels=None, logits=None, axis=-1,
                                         name=None, dim=None):
    """-sum(labels * log_softmax(logits)) along `axis`; gradients flow into labels too."""
    from tensorflux._src.ops import array_ops
    if _sentinel is not None:
        raise ValueError("Only call `softmax_cross_entropy_with_logits_v2` with named "
                         "arguments (labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    axis = dim if dim is not None else axis
    with _graph.name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels", dtype=logits.dtype.base_dtype)
        rank = logits.shape.ndims
        if rank is None:
            raise ValueError("softmax_cross_entropy_with_logits needs logits of known rank")
        if axis not in (-1, rank - 1):
            perm = list(range(rank))
            perm[axis], perm[-1] = perm[-1], perm[axis]
            logits = array_ops.transpose(logits, perm)
            labels = array_ops.transpose(labels, perm)
        if rank == 2:
            loss, _ = apply_op("SoftmaxCrossEntropyWithLogits", name=scope, features=logits,
                               labels=labels)
            return loss
        # The op takes matrices: flatten leading dims, then restore them.
        batch_shape = array_ops.shape(logits)[:-1] if rank > 1 else None
        flat_logits = array_ops.reshape(logits, [-1, array_ops.shape(logits)[-1]])
        flat_labels = array_ops.reshape(labels, [-1, array_ops.shape(labels)[-1]])
        loss, _ = apply_op("SoftmaxCrossEntropyWithLogits", features=flat_logits,
                           labels=flat_labels)
        if batch_shape is None:
            return array_ops.reshape(loss, [], name=scope)
        return array_ops.reshape(loss, batch_shape, name=scope)


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1,
                                      name=None, axis=None):
    """TF1's v1: like v2, but no gradient flows into labels."""
    from tensorflux._src.autodiff.gradients import stop_gradient
    if _sentinel is not None:
        raise ValueError("Only call `softmax_cross_entropy_with_logits` with named arguments "
                         "(labels=..., logits=..., ...)")
    with _graph.name_scope(name, "softmax_cross_entropy_with_logits_sg",
                           [logits, labels]) as scope:
        labels = stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits,
                                                axis=dim if axis is None else axis,
                                                name=scope[:-1] or None)


def _sparse_xent_shape(op):
    logits, labels = op.inputs[0].shape.with_rank(2), op.inputs[1].shape.with_rank(1)
    if not logits[0].is_compatible_with(labels[0]):
        raise ValueError(f"logits and labels must have the same first dimension, got logits "
                         f"shape {logits} and labels shape {labels}")
    return [TensorShape([logits[0].merge_with(labels[0])]), logits]


def _sparse_xent_lower(features, labels):
    log_p = jax.nn.log_softmax(features, axis=-1)
    n = features.shape[-1]
    onehot = jax.nn.one_hot(labels, n, dtype=features.dtype)
    # Out-of-range labels give NaN (TF's GPU behaviour; its CPU kernel raises instead).
    bad = (labels < 0) | (labels >= n)
    loss = jnp.where(bad, jnp.nan, -jnp.sum(onehot * log_p, axis=-1))
    backprop = jnp.where(bad[:, None], jnp.nan, jnp.exp(log_p) - onehot)
    return loss.astype(features.dtype), backprop.astype(features.dtype)


def _sparse_xent_grad(op, dloss, dbackprop):
    from tensorflux._src.ops import array_ops
    return [array_ops.expand_dims(dloss, -1) * op.outputs[1], None]


register(OpDef(
    "SparseSoftmaxCrossEntropyWithLogits", inputs=("features: T", "labels: Tlabels"),
    outputs=("loss: T", "backprop: T"), attrs={"T": F, "Tlabels": _dtypes.INDEX},
    shape=_sparse_xent_shape, lower=_sparse_xent_lower, grad=_sparse_xent_grad,
))


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None,
                                             name=None):
    """Cross-entropy of integer class labels (shape [d0..dn-1]) against logits [.., C]."""
    from tensorflux._src.ops import array_ops
    if _sentinel is not None:
        raise ValueError("Only call `sparse_softmax_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...)")
    with _graph.name_scope(name, "SparseSoftmaxCrossEntropyWithLogits",
                           [labels, logits]) as scope:
        labels = convert_to_tensor(labels, name="labels")
        logits = convert_to_tensor(logits, name="logits")
        lrank, grank = labels.shape.ndims, logits.shape.ndims
        if lrank is not None and grank is not None and lrank != grank - 1:
            raise ValueError(f"Rank mismatch: Rank of labels (received {lrank}) should equal "
                             f"rank of logits minus 1 (received {grank}).")
        if grank == 2:
            loss, _ = apply_op("SparseSoftmaxCrossEntropyWithLogits", name=scope,
                               features=logits, labels=labels)
            return loss
        flat_logits = array_ops.reshape(logits, [-1, array_ops.shape(logits)[-1]])
        flat_labels = array_ops.reshape(labels, [-1])
        loss, _ = apply_op("SparseSoftmaxCrossEntropyWithLogits", features=flat_logits,
                           labels=flat_labels)
        return array_ops.reshape(loss, array_ops.shape(labels), name=scope)


# -- bias_add ---------------------------------------------------------------------------------
def _bias_add_shape(op):
    value, bias = op.inputs[0].shape.with_rank_at_least(2), op.inputs[1].shape.with_rank(1)
    fmt = op.get_attr("data_format")
    if value.ndims is not None:
        channel = value[1] if fmt == "NCHW" else value[-1]
        if not channel.is_compatible_with(bias[0]):
            raise ValueError(f"Dimensions must be equal, but are {channel} and {bias[0]}")
    return value


def _bias_add_lower(value, bias, data_format):
    if data_format == "NCHW":
        return value + bias.reshape((-1,) + (1,) * (value.ndim - 2))
    return value + bias


def _bias_add_grad(op, dy):
    from tensorflux._src.ops import reduce_ops
    axes = [0] + list(range(2, dy.shape.ndims)) if op.get_attr("data_format") == "NCHW" \
        else list(range(dy.shape.ndims - 1))
    return [dy, reduce_ops.reduce_sum(dy, axes)]


register(OpDef(
    "BiasAdd", inputs=("value: T", "bias: T"), outputs=("output: T",),
    attrs={"T": _dtypes.NUMBERS, "data_format": "NHWC"}, shape=_bias_add_shape,
    lower=_bias_add_lower, grad=_bias_add_grad,
))


def bias_add(value, bias, data_format=None, name=None):
    """value + bias, with bias along the channel dimension."""
    if data_format not in (None, "NHWC", "NCHW", "N..C", "NC.."):
        raise ValueError(f"data_format must be NHWC or NCHW, got {data_format!r}")
    fmt = "NCHW" if data_format in ("NCHW", "NC..") else "NHWC"
    with _graph.name_scope(name, "BiasAdd", [value, bias]) as scope:
        value = convert_to_tensor(value, name="input")
        bias = convert_to_tensor(bias, dtype=value.dtype.base_dtype, name="bias")
        return apply_op("BiasAdd", name=scope, value=value, bias=bias, data_format=fmt)
