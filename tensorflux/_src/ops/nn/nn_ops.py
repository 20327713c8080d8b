"""Core `tf.nn` ops: activations, softmax, cross-entropy, bias_add, dropout (with gradients).

The other `tf.nn` families live beside this module (tensorflux/nn.py exports each):
nn_loss_ops (logistic and L2 losses), nn_norm_ops (moments, batch and local response
normalization), nn_embedding_ops (embedding_lookup), nn_sampling_ops (candidate
samplers, nce_loss, sampled_softmax_loss, which builds on this module's softmax
cross-entropy).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.framework import dispatch as _dispatch
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.array.array_ops import stop_gradient
from tensorflux._src.ops.array.gather_ops import where
from tensorflux._src.ops.array.generator_ops import zeros_like
from tensorflux._src.ops.linalg.linalg_ops import matmul
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.math.grad_helpers import unbroadcast
from tensorflux._src.ops.nn import softmax_kernels
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import merge_shapes, with_rank
from tensorflux._src.ops.random import random_ops
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.ops.shape_fns import broadcast, static_value, unchanged

__all__ = ["relu", "softmax", "log_softmax", "bias_add", "softmax_cross_entropy_with_logits",
           "softmax_cross_entropy_with_logits_v2", "sparse_softmax_cross_entropy_with_logits",
           "relu6", "crelu", "leaky_relu", "elu", "selu", "gelu", "swish", "silu", "softplus",
           "softsign", "in_top_k", "dropout", "zero_fraction", "xw_plus_b", "relu_layer"]

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
    s = op.outputs[0]
    return [(dy - reduce_ops.reduce_sum(dy * s, -1, keepdims=True)) * s]


def _log_softmax_grad(op, dy):
    return [dy - reduce_ops.reduce_sum(dy, -1, keepdims=True) * math_ops.exp(op.outputs[0])]


def _rank_at_least_1(op):
    return op.inputs[0].shape.with_rank_at_least(1)


register(OpDef("Softmax", inputs=("logits: T",), outputs=("softmax: T",), attrs={"T": F},
               shape=_rank_at_least_1, lower=softmax_kernels.softmax,
               grad=_softmax_grad))
register(OpDef("LogSoftmax", inputs=("logits: T",), outputs=("logsoftmax: T",),
               attrs={"T": F}, shape=_rank_at_least_1,
               lower=softmax_kernels.log_softmax,
               grad=_log_softmax_grad))


def _along_last_axis(op_type, logits, axis, name):
    """TF's softmax ops work on the last axis; other axes are swapped there and back."""
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
    # TF's rule: logits and labels broadcast (the kernel broadcasts, e.g. one row of
    # labels against a batch) to a matrix; an input of unknown rank counts as a matrix
    # when the other one is. (Where TF merges a size-1 row with an unknown one, the
    # unknown size is kept: the kernel's result has the broadcast size.)
    logits, labels = op.inputs[0].shape, op.inputs[1].shape
    matrix = TensorShape([None, None])
    if logits.ndims is None and labels.ndims in (None, 2):
        logits = matrix
    if labels.ndims is None and logits.ndims == 2:
        labels = matrix
    both = broadcast(logits, labels)
    if both.ndims is None:
        raise ValueError("Shape must be broadcasted with rank 2, but is rank is unknown.")
    if both.ndims != 2:
        raise ValueError(f"Shape must be broadcasted with rank 2, but is rank {both.ndims}")
    return [TensorShape([both[0]]), both]


def _xent_lower(features, labels):
    features, labels = jnp.broadcast_arrays(features, labels)
    shifted, e, total = softmax_kernels.exp_shifted(features)
    loss = jnp.sum(labels * (jnp.log(total) - shifted), axis=-1)  # -sum(labels * log_p)
    return loss, e / total - labels


def _xent_grad(op, dloss, dbackprop):
    d = array_ops.expand_dims(dloss, -1)
    grad_logits = d * op.outputs[1]
    grad_labels = d * -apply_op("LogSoftmax", logits=op.inputs[0])
    # Sum over the rows a broadcast input was repeated to.
    return [unbroadcast(grad_logits, op.inputs[0]), unbroadcast(grad_labels, op.inputs[1])]


register(OpDef(
    "SoftmaxCrossEntropyWithLogits", inputs=("features: T", "labels: T"),
    outputs=("loss: T", "backprop: T"), attrs={"T": F}, shape=_xent_shape,
    lower=_xent_lower, grad=_xent_grad,
))


def _flatten_outer_dims(x):
    """[d0, ..., dn-1, classes] -> [d0 * ... * dn-1, classes], keeping known sizes."""
    shape = x.shape
    if shape.ndims == 2:
        return x
    flat = array_ops.reshape(x, array_ops.concat([[-1], array_ops.shape(x)[-1:]], 0))
    if shape.ndims is not None:
        outer = shape[:-1]
        flat.set_shape([outer.num_elements() if outer.is_fully_defined() else None,
                        shape[-1].value])
    return flat


def softmax_cross_entropy_with_logits_v2(_sentinel=None, labels=None, logits=None, axis=-1,
                                         name=None, dim=None):
    """-sum(labels * log_softmax(logits)) along `axis`; gradients flow into labels too.

    As TF 1.15: labels are cast to the logits' dtype (float16/bfloat16 logits are computed
    in float32), both are flattened to [rows, classes] separately, and the op broadcasts
    them, so labels of shape [1, batch, classes] or [classes] against [batch, classes]
    logits give one loss per logits row."""
    if _sentinel is not None:
        raise ValueError("Only call `softmax_cross_entropy_with_logits_v2` with named "
                         "arguments (labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    axis = dim if dim is not None else axis
    with _graph.name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        input_dtype = logits.dtype.base_dtype
        low_precision = input_dtype in (_dtypes.float16, _dtypes.bfloat16)
        precise = math_ops.cast(logits, _dtypes.float32) if low_precision else logits
        if labels.dtype.base_dtype != precise.dtype.base_dtype:
            labels = math_ops.cast(labels, precise.dtype.base_dtype)
        rank = logits.shape.ndims
        if rank is None:
            raise ValueError("softmax_cross_entropy_with_logits needs logits of known rank")
        if axis not in (-1, rank - 1):
            perm = list(range(rank))
            perm[axis], perm[-1] = perm[-1], perm[axis]
            precise = array_ops.transpose(precise, perm)
            labels = array_ops.transpose(labels, perm)
        if rank == 2 and labels.shape.ndims == 2 and not low_precision:
            loss, _ = apply_op("SoftmaxCrossEntropyWithLogits", name=scope, features=precise,
                               labels=labels)
            return loss
        loss, _ = apply_op("SoftmaxCrossEntropyWithLogits",
                           features=_flatten_outer_dims(precise),
                           labels=_flatten_outer_dims(labels))
        # One loss per logits row: the logits' shape without the class axis.
        batch_shape = precise.shape[:-1]
        if batch_shape.is_fully_defined():
            target = batch_shape.as_list() if rank > 1 else []
        else:
            target = array_ops.shape(precise)[:-1]
        if low_precision:
            loss = array_ops.reshape(loss, target)
            return math_ops.cast(loss, input_dtype, name=scope)
        return array_ops.reshape(loss, target, name=scope)


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1,
                                      name=None, axis=None):
    """TF1's v1: like v2 (labels cast to the logits' dtype, broadcast rows), but no
    gradient flows into labels."""
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


def _check_labels_in_range(labels, num_classes):
    """TF's CPU kernel rejects labels outside [0, num_classes); its GPU kernel returns NaN
    instead. The lowering cannot tell which device the cluster runs on, so the check is
    always made (one compare and one reduction, fused by XLA); a failing run raises
    InvalidArgumentError with TF's CPU message and keeps variables at their old values.
    """
    xp = np if isinstance(labels, np.ndarray) else jnp  # static labels fail right away
    ok = xp.all((labels >= 0) & (labels < num_classes))

    def message(values):
        bad = values.min() if values.min() < 0 else values.max()
        shown = " ".join(str(int(v)) for v in values.reshape(-1))
        return (f"Received a label value of {bad} which is outside the valid range of "
                f"[0, {num_classes}).  Label values: {shown}")

    effects.check(ok, message, data=(labels,))


def _sparse_xent_lower(features, labels):
    n = features.shape[-1]
    _check_labels_in_range(labels, n)
    shifted, e, total = softmax_kernels.exp_shifted(features)
    # The loss gathers each row's one shifted logit: XLA computes just those, where a
    # one-hot product would be one more pass over all classes (a 50k vocabulary).
    safe = jnp.clip(labels, 0, n - 1)[..., None]  # out of range fails the check above
    picked = jnp.take_along_axis(shifted, safe.astype(jnp.int32), axis=-1)[..., 0]
    loss = jnp.log(total[..., 0]) - picked  # -log_p[label]
    onehot = jax.nn.one_hot(labels, n, dtype=features.dtype)
    backprop = e / total - onehot
    return loss.astype(features.dtype), backprop.astype(features.dtype)


def _sparse_xent_grad(op, dloss, dbackprop):
    return [array_ops.expand_dims(dloss, -1) * op.outputs[1], None]


register(OpDef(
    "SparseSoftmaxCrossEntropyWithLogits", inputs=("features: T", "labels: Tlabels"),
    outputs=("loss: T", "backprop: T"), attrs={"T": F, "Tlabels": _dtypes.INDEX},
    shape=_sparse_xent_shape, lower=_sparse_xent_lower, grad=_sparse_xent_grad,
))


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None,
                                             name=None):
    """Cross-entropy of integer class labels (shape [d0..dn-1]) against logits [.., C]."""
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


# -- activations with their own kernels ---------------------------------------------------
# Each op has a `<Op>Grad` kernel taking (gradients, x) where x is the op's input or output,
# as in TF's nn_grad.py; the Grad kernels' own gradients (second derivatives) follow TF.
_SELU_SCALE = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717


def _zeros_like(x):
    return zeros_like(x)


def _where(cond, x, y):
    return where(cond, x, y)


def _activation(op_type, forward, backward, dtypes, from_output, grad_input="features",
                attrs=None, grad_grad=None):
    """Registers `op_type` and `<op_type>Grad(gradients, <grad_input>)`.

    from_output: the Grad kernel reads the op's output (Elu, Selu) rather than its input.
    """
    attrs = dict(attrs or {})
    grad_type = op_type + "Grad"
    register(OpDef(grad_type, inputs=("gradients: T", f"{grad_input}: T"),
                   outputs=("backprops: T",), attrs={"T": dtypes, **attrs},
                   shape=_same_shape_pair, lower=backward, grad=grad_grad))

    def grad(op, dy):
        x = op.outputs[0] if from_output else op.inputs[0]
        return [apply_op(grad_type, gradients=dy, **{grad_input: x},
                         **{k: op.get_attr(k) for k in attrs})]

    register(OpDef(op_type, inputs=("features: T",), outputs=("activations: T",),
                   attrs={"T": dtypes, **attrs}, shape=unchanged, lower=forward, grad=grad))


def _same_kernel_grad_grad(op, grad):
    # Relu6Grad / LeakyReluGrad are linear in `gradients` and piecewise constant in x.
    attrs = {k: op.get_attr(k) for k in op.op_def.default_attrs}
    return [apply_op(op.type, gradients=grad, features=op.inputs[1], **attrs),
            _zeros_like(op.inputs[1])]


def _exp_linear_grad_grad(op, grad):
    # EluGrad / SeluGrad: d/d(outputs) of the x < 0 branch (gradients * (outputs + c)) is
    # `gradients`; the x > 0 branch does not depend on outputs.
    y = op.inputs[1]
    return [apply_op(op.type, gradients=grad, outputs=y),
            _where(y < 0, grad * op.inputs[0], _zeros_like(y))]


def _softplus_grad_grad(op, grad):
    # dx = dy * sigmoid(x): d/d(dy) = sigmoid(x), d/dx = dy / (e^-x + 2 + e^x).
    dy, x = op.inputs
    two = convert_to_tensor(2.0, dtype=x.dtype.base_dtype)
    return [apply_op("SoftplusGrad", gradients=grad, features=x),
            grad * dy / (math_ops.exp(-x) + two + math_ops.exp(x))]


_activation("Relu6", lambda features: jnp.clip(features, 0, 6),
            lambda gradients, features: jnp.where((features > 0) & (features < 6), gradients,
                                                  jnp.zeros_like(gradients)),
            _dtypes.REAL, from_output=True, grad_grad=_same_kernel_grad_grad)
_activation("LeakyRelu",
            lambda features, alpha: jnp.where(features > 0, features,
                                              features * jnp.asarray(alpha, features.dtype)),
            lambda gradients, features, alpha: jnp.where(
                features > 0, gradients, gradients * jnp.asarray(alpha, gradients.dtype)),
            F, from_output=False, attrs={"alpha": 0.2}, grad_grad=_same_kernel_grad_grad)
_activation("Elu", lambda features: jnp.where(features < 0, jnp.expm1(features), features),
            lambda gradients, outputs: jnp.where(outputs < 0, gradients * (outputs + 1),
                                                 gradients),
            F, from_output=True, grad_input="outputs", grad_grad=_exp_linear_grad_grad)
_activation("Selu",
            lambda features: jnp.where(features < 0,
                                       (_SELU_SCALE * _SELU_ALPHA) * jnp.expm1(features),
                                       _SELU_SCALE * features).astype(features.dtype),
            lambda gradients, outputs: jnp.where(
                outputs < 0, gradients * (outputs + _SELU_SCALE * _SELU_ALPHA),
                gradients * _SELU_SCALE).astype(gradients.dtype),
            F, from_output=True, grad_input="outputs", grad_grad=_exp_linear_grad_grad)
_activation("Softplus", jax.nn.softplus,
            lambda gradients, features: gradients * jax.nn.sigmoid(features),
            F, from_output=False, grad_grad=_softplus_grad_grad)
# TF defines no gradient for SoftsignGrad (tf.gradients of it raises LookupError).
_activation("Softsign", lambda features: features / (1 + jnp.abs(features)),
            lambda gradients, features: gradients / jnp.square(1 + jnp.abs(features)),
            F, from_output=False)


def relu6(features, name=None):
    """min(max(features, 0), 6)."""
    with _graph.name_scope(name, "Relu6", [features]) as scope:
        features = convert_to_tensor(features, name="features")
        return apply_op("Relu6", name=scope, features=features)


def crelu(features, name=None, axis=-1):
    """Concatenated ReLU: relu(concat([features, -features], axis)); doubles that axis."""
    with _graph.name_scope(name, "CRelu", [features]) as scope:
        features = convert_to_tensor(features, name="features")
        c = array_ops.concat([features, -features], axis, name="concat")
        return apply_op("Relu", name=scope, features=c)


def leaky_relu(features, alpha=0.2, name=None):
    """max(features, alpha * features) for alpha <= 1; integer features become float32."""
    with _graph.name_scope(name, "LeakyRelu", [features, alpha]) as scope:
        features = convert_to_tensor(features, name="features")
        if features.dtype.is_integer:
            features = math_ops.cast(features, _dtypes.float32)
        if isinstance(alpha, np.ndarray):
            alpha = alpha.item()
        return apply_op("LeakyRelu", name=scope, features=features, alpha=float(alpha))


def elu(features, name=None):
    """exp(features) - 1 where features < 0, else features."""
    return apply_op("Elu", name=name, features=features)


def selu(features, name=None):
    """scale * elu(features) with the negative branch scaled by alpha (self-normalizing)."""
    return apply_op("Selu", name=name, features=features)


def softplus(features, name=None):
    """log(exp(features) + 1)."""
    return apply_op("Softplus", name=name, features=features)


def softsign(features, name=None):
    """features / (abs(features) + 1)."""
    return apply_op("Softsign", name=name, features=features)


def gelu(features, approximate=False, name=None):
    """0.5 x (1 + erf(x / sqrt 2)), or its tanh approximation (TF 2's tf.nn.gelu)."""
    with _graph.name_scope(name, "Gelu", [features]):
        features = convert_to_tensor(features, name="features")
        dtype = features.dtype.base_dtype
        if approximate:
            coeff = convert_to_tensor(0.044715, dtype=dtype)
            return 0.5 * features * (1.0 + math_ops.tanh(
                0.7978845608028654 * (features + coeff * math_ops.pow(features, 3))))
        return 0.5 * features * (1.0 + math_ops.erf(
            features / convert_to_tensor(1.4142135623730951, dtype=dtype)))


def swish(features, name=None):
    """features * sigmoid(features) (Ramachandran et al. 2017)."""
    with _graph.name_scope(name, "swish", [features]):
        features = convert_to_tensor(features, name="features")
        return features * math_ops.sigmoid(features)


def silu(features, beta=1.0, name=None):
    """features * sigmoid(beta * features) (TF 2's name for swish)."""
    with _graph.name_scope(name, "silu", [features]):
        features = convert_to_tensor(features, name="features")
        beta = convert_to_tensor(beta, dtype=features.dtype.base_dtype, name="beta")
        return features * math_ops.sigmoid(beta * features)


def log_sigmoid(x, name=None):
    """log(1 / (1 + exp(-x))) = -softplus(-x); TF exports it as tf.log_sigmoid / tf.math."""
    with _graph.name_scope(name, "LogSigmoid", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return math_ops.negative(apply_op("Softplus", features=-x), name=scope)


# -- in_top_k --------------------------------------------------------------------------------
def _in_top_k_shape(op):
    predictions = with_rank(op.inputs[0].shape, 2)
    targets = with_rank(op.inputs[1].shape, 1)
    with_rank(op.inputs[2].shape, 0)
    return merge_shapes(TensorShape([predictions[0]]), targets)


def _in_top_k_lower(predictions, targets, k):
    # In the top k when fewer than k classes score strictly higher: ties all count as in.
    # A target out of range, or with a non-finite score, is never in the top k.
    n = predictions.shape[1]
    valid = (targets >= 0) & (targets < n)
    safe = jnp.clip(targets, 0, max(n - 1, 0)).astype(jnp.int32)
    target_score = jnp.take_along_axis(predictions, safe[:, None], axis=1)[:, 0]
    higher = jnp.sum(predictions > target_score[:, None], axis=1)
    return valid & jnp.isfinite(target_score) & (higher < k)


register(OpDef(
    "InTopKV2", inputs=("predictions: float", "targets: T", "k: T"),
    outputs=("precision: bool",), attrs={"T": _dtypes.INDEX}, shape=_in_top_k_shape,
    lower=_in_top_k_lower, not_differentiable=True,
))


def in_top_k(predictions, targets, k, name=None):
    """Whether each target class is among the k highest predictions of its row."""
    with _graph.name_scope(name, "in_top_k") as scope:
        return apply_op("InTopKV2", name=scope, predictions=predictions, targets=targets, k=k)


# -- dropout and other composites ---------------------------------------------------------------
def _noise_shape(x, noise_shape):
    if noise_shape is None:
        return array_ops.shape(x)
    try:
        given = tensor_shape.as_shape(noise_shape)
    except (TypeError, ValueError):
        return noise_shape
    if x.shape.ndims is not None and given.ndims == x.shape.ndims:
        # Unknown entries of noise_shape take x's dims, as TF's best effort does.
        dims = [xd if nd is None and xd is not None else nd
                for xd, nd in zip(x.shape.as_list(), given.as_list())]
        if None not in dims:
            return dims
    return noise_shape


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """Zeroes each element with probability `rate` (= 1 - keep_prob) and scales the rest by
    1 / (1 - rate). `noise_shape` (broadcastable to x) shares keep/drop decisions."""
    try:
        keep = 1. - keep_prob if keep_prob is not None else None
    except TypeError:
        raise ValueError(f"keep_prob must be a floating point number or Tensor "
                         f"(got {keep_prob!r})") from None
    if rate is not None and keep is not None:
        raise ValueError("Cannot specify both 'keep_prob' and 'rate'")
    rate = keep if rate is None else rate
    if rate is None:
        raise ValueError("You must provide a rate to dropout.")
    with _graph.name_scope(name, "dropout", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError(f"x has to be a floating point tensor since it's going to be "
                             f"scaled. Got a {x.dtype!r} tensor instead.")
        if isinstance(rate, (int, float, np.integer, np.floating)) and not isinstance(rate, bool):
            if not (0 <= rate < 1):
                raise ValueError(f"rate must be a scalar tensor or a float in the range "
                                 f"[0, 1), got {rate:g}")
            if rate == 0:
                return x
        rate = convert_to_tensor(rate, dtype=x.dtype.base_dtype, name="rate")
        if not rate.shape.is_compatible_with(TensorShape([])):
            raise ValueError(f"Shapes {rate.shape} and () are incompatible")
        value = static_value(rate)
        if value is not None and value == 0:
            return x
        random_tensor = random_ops.random_uniform(_noise_shape(x, noise_shape), seed=seed,
                                                  dtype=x.dtype.base_dtype)
        keep_prob = 1 - rate
        scale = 1 / keep_prob
        # >= so that a draw equal to rate is kept, as in TF.
        keep_mask = random_tensor >= rate
        ret = x * scale * math_ops.cast(keep_mask, x.dtype.base_dtype)
        ret.set_shape(x.shape)
        return ret


def zero_fraction(value, name=None):
    """The fraction of zeros in `value`, as float32 (NaN when value is empty)."""
    with _graph.name_scope(name, "zero_fraction", [value]):
        value = convert_to_tensor(value, name="value")
        size = array_ops.size(value, out_type=_dtypes.int64)
        with _graph.name_scope("count_nonzero"):
            zero = convert_to_tensor(np.zeros((), value.dtype.as_numpy_dtype), name="zero")
            num_nonzero = reduce_ops.reduce_sum(
                math_ops.cast(math_ops.not_equal(value, zero), _dtypes.int64),
                name="nonzero_count")
        with _graph.name_scope("counts_to_fraction"):
            num_zero = size - num_nonzero
            fraction = (math_ops.cast(num_zero, _dtypes.float32)
                        / math_ops.cast(size, _dtypes.float32))
        return array_ops.identity(fraction, name="fraction")


def xw_plus_b(x, weights, biases, name=None):
    """matmul(x, weights) + biases."""
    with _graph.name_scope(name, "xw_plus_b", [x, weights, biases]) as scope:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, name="weights")
        biases = convert_to_tensor(biases, name="biases")
        return bias_add(matmul(x, weights), biases, name=scope)


def relu_layer(x, weights, biases, name=None):
    """relu(matmul(x, weights) + biases)."""
    with _graph.name_scope(name, "relu_layer", [x, weights, biases]) as scope:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, name="weights")
        biases = convert_to_tensor(biases, name="biases")
        return relu(bias_add(matmul(x, weights), biases), name=scope)


# RaggedTensor (and other composite) arguments dispatch to registered handlers
# (framework/dispatch.py; TF's ragged_dispatch list).
_dispatch.add_dispatch_support_to(globals(), [
    "log_sigmoid",
])
