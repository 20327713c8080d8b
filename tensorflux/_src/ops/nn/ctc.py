"""CTC loss: `tf.nn.ctc_loss` (TF1: sparse labels, the CTCLoss op), `ctc_loss_v2` (dense
or sparse labels), `collapse_repeated` and `ctc_unique_labels`.

CTCLoss is one compiled record: its lowering turns the sparse labels into padded dense
ones, checks them as TF's CPU kernel does (one flag; the message is worded on the host
only when it fails, see ctc_kernels.first_error) and runs the batched forward-backward
recursion (ctc_kernels.loss_and_grad). As in TF, the op's second output is the gradient
with respect to the logits, and the gradient function multiplies it by the incoming
gradient behind a PreventGradient op, so asking for a second derivative raises TF's
LookupError.

The padded label length must be static for XLA. When the labels are constants it is
their longest sequence; otherwise min(number of label values, max_time): a sequence
with more labels than max_time frames can have no alignment, and TF's kernel then
either fails ("Not enough time ...") or, with ignore_longer_outputs_than_inputs, gives
it a zero loss and gradient, so no longer sequence is ever computed.

ctc_loss_v2 with dense labels is TF's ctc_loss_dense: the blank class is moved to index
0 with graph ops, then the private record _CTCLossDense (the same kernel, blank 0,
merge_repeated) gives loss and gradient. Unlike TF 1.15's dense path, whose gradient on
frames past logit_length was softmax(logits) (fixed in later TF), the gradient there is
zero, the true derivative of the loss; a labeling with no alignment costs +inf here
(TF's dense path returned a large finite value from its log(1e-307) stand-in for log 0).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from tensorflux._src.compiler import effects
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.sparse_tensor import SparseTensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops, gather_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.nn import ctc_kernels as _k
from tensorflux._src.ops.op_helpers import deprecated_argument_lookup
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error, with_rank
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["ctc_loss", "ctc_loss_v2", "collapse_repeated", "ctc_unique_labels"]

_F = (_dtypes.float32, _dtypes.float64)


def merge_dim(a, b):
    """TF's shape-function Merge of two dimensions, with its message."""
    if a.value is not None and b.value is not None and a.value != b.value:
        raise ValueError(f"Dimensions must be equal, but are {a.value} and {b.value}")
    return a if a.value is not None else b


# -- PreventGradient ---------------------------------------------------------------------------
def _prevent_gradient_grad(op, _):
    raise LookupError(f"Gradient explicitly disabled. Reason: {op.get_attr('message')}")


register(OpDef(
    "PreventGradient", inputs=("input: T",), outputs=("output: T",),
    attrs={"T": _dtypes.NUMBERS + (_dtypes.bool,), "message": ""},
    shape=lambda op: op.inputs[0].shape, lower=lambda input: input,  # noqa: A006
    grad=_prevent_gradient_grad,
))


# -- CTCLoss -----------------------------------------------------------------------------------
def _ctc_loss_shape(op):
    inputs = with_rank(op.inputs[0].shape, 3)
    indices = with_rank(op.inputs[1].shape, 2)
    values = with_rank(op.inputs[2].shape, 1)
    seq_len = with_rank(op.inputs[3].shape, 1)
    merge_dim(indices[0], values[0])
    batch = merge_dim(inputs[1], seq_len[0])
    return [TensorShape([batch]), TensorShape([inputs[0], batch, inputs[2]])]


def _label_cap(indices, values, steps, batch, num_classes, collapse):
    """The padded label length: exact for constant labels, else min(N, max_time)."""
    n = values.shape[0]
    if isinstance(indices, np.ndarray) and isinstance(values, np.ndarray):
        _, lengths, _, _ = _k.sparse_to_dense(indices, values, batch, num_classes, max(n, 1),
                                              collapse)
        return max(int(np.max(lengths, initial=0)), 1)
    return max(min(n, steps), 1)


def _ctc_loss_lower(inputs, labels_indices, labels_values, sequence_length,
                    preprocess_collapse_repeated, ctc_merge_repeated,
                    ignore_longer_outputs_than_inputs):
    steps, batch, classes = inputs.shape
    if batch == 0:
        raise kernel_error("batch_size must not be 0")
    if labels_indices.shape[0] != labels_values.shape[0]:
        raise kernel_error(f"labels_indices and labels_values must contain the same number "
                           f"of rows, but saw shapes: [{','.join(map(str, labels_indices.shape))}]"
                           f" vs. [{labels_values.shape[0]}]")
    collapse, ignore = preprocess_collapse_repeated, ignore_longer_outputs_than_inputs
    cap = _label_cap(labels_indices, labels_values, steps, batch, classes, collapse)
    # Constant labels are densified and checked with NumPy while the run is compiled.
    static = all(isinstance(v, np.ndarray)
                 for v in (labels_indices, labels_values, sequence_length))
    xp = np if static else jnp
    indices, seq_len = xp.asarray(labels_indices), xp.asarray(sequence_length)
    labels, lengths, counts, flags = _k.sparse_to_dense(
        indices, xp.asarray(labels_values), batch, classes, cap, collapse)
    ok = _k.validity(indices, seq_len, counts, flags, steps, batch, ignore)
    effects.check(ok,
                  lambda ix, v, sl: _k.first_error(ix, v, sl, steps, classes, collapse, ignore),
                  data=(labels_indices, labels_values, sequence_length))
    loss, grad = _k.loss_and_grad(inputs, labels, lengths, seq_len, classes - 1,
                                  ctc_merge_repeated)
    # TF's kernel leaves loss and gradient at zero for these examples.
    skipped = seq_len == 0
    if ignore:
        skipped = skipped | (counts > seq_len)
    loss = jnp.where(skipped, jnp.zeros_like(loss), loss)
    grad = jnp.where(skipped[None, :, None], jnp.zeros_like(grad), grad)
    return loss, grad


def _broadcast_mul(vec, mat):
    return array_ops.expand_dims(vec, -1) * mat


def _ctc_loss_grad(op, grad_loss, _):
    # As TF: a second derivative would need the gradient of the fused gradient output.
    grad = apply_op("PreventGradient", input=op.outputs[1], message=(
        "Currently there is no way to take the second  derivative of ctc_loss due to the "
        "fused implementation's interaction  with tf.gradients()"))
    return [_broadcast_mul(grad_loss, grad), None, None, None]


register(OpDef(
    "CTCLoss",
    inputs=("inputs: T", "labels_indices: int64", "labels_values: int32",
            "sequence_length: int32"),
    outputs=("loss: T", "gradient: T"),
    attrs={"T": _F, "preprocess_collapse_repeated": False, "ctc_merge_repeated": True,
           "ignore_longer_outputs_than_inputs": False},
    type_defaults={"T": _dtypes.float32},
    shape=_ctc_loss_shape, lower=_ctc_loss_lower, grad=_ctc_loss_grad,
))


def _transpose(x):
    return array_ops.transpose(x, [1, 0, 2])


def ctc_loss(labels, inputs=None, sequence_length=None, preprocess_collapse_repeated=False,
             ctc_merge_repeated=True, ignore_longer_outputs_than_inputs=False,
             time_major=True, logits=None):
    """Per-example CTC loss (negative log-likelihood) of int32 SparseTensor `labels`
    given logits [max_time, batch, num_classes] (or batch-major when not time_major);
    class num_classes - 1 is the blank."""
    inputs = deprecated_argument_lookup("logits", logits, "inputs", inputs)
    if not isinstance(labels, SparseTensor):
        raise TypeError("Expected labels (first argument) to be a SparseTensor")
    if not time_major:
        inputs = _transpose(inputs)
    loss, _ = apply_op("CTCLoss", inputs=inputs, labels_indices=labels.indices,
                       labels_values=labels.values, sequence_length=sequence_length,
                       preprocess_collapse_repeated=preprocess_collapse_repeated,
                       ctc_merge_repeated=ctc_merge_repeated,
                       ignore_longer_outputs_than_inputs=ignore_longer_outputs_than_inputs)
    return loss


# -- dense labels (ctc_loss_v2) ----------------------------------------------------------------
def _dense_shape(op):
    logits = with_rank(op.inputs[0].shape, 3)
    labels = with_rank(op.inputs[1].shape, 2)
    label_length = with_rank(op.inputs[2].shape, 1)
    logit_length = with_rank(op.inputs[3].shape, 1)
    batch = merge_dim(merge_dim(logits[1], labels[0]), merge_dim(label_length[0],
                                                                  logit_length[0]))
    return [TensorShape([batch]), TensorShape([logits[0], batch, logits[2]])]


def _dense_lower(logits, labels, label_length, logit_length):
    return _k.loss_and_grad(logits, labels, label_length, logit_length, 0, True)


def _dense_grad(op, grad_loss, _):
    return [array_ops.reshape(grad_loss, [1, -1, 1]) * op.outputs[1], None, None, None]


register(OpDef(
    "_CTCLossDense",
    inputs=("logits: T", "labels: Tlabels", "label_length: Tlabel_length",
            "logit_length: Tlogit_length"),
    outputs=("loss: T", "gradient: T"),
    attrs={"T": _F, "Tlabels": _dtypes.INDEX, "Tlabel_length": _dtypes.INDEX,
           "Tlogit_length": _dtypes.INDEX},
    shape=_dense_shape, lower=_dense_lower, grad=_dense_grad,
))


def _num_classes(logits):
    n = logits.shape[2].value if logits.shape.ndims is not None else None
    if n is None:
        raise ValueError("ctc_loss_v2 with a blank_index needs the number of classes "
                         "(logits' last dimension) to be known")
    return n


def _move_blank(logits, blank_index, to_front):
    """Moves class `blank_index` to the front (dense path) or the back (sparse path)."""
    blank = logits[:, :, blank_index:blank_index + 1]
    before, after = logits[:, :, :blank_index], logits[:, :, blank_index + 1:]
    parts = [blank, before, after] if to_front else [before, after, blank]
    return array_ops.concat(parts, axis=2)


def ctc_loss_v2(labels, logits, label_length, logit_length, logits_time_major=True,
                unique=None, blank_index=None, name=None):
    """CTC loss for dense padded labels [batch, max_label_length] (blank 0 by default) or
    SparseTensor labels (blank_index required); returns the per-example loss."""
    del unique  # only a faster path on TPU; the result is the same
    if isinstance(labels, SparseTensor):
        if blank_index is None:
            raise ValueError("blank_index must be given when using SparseTensor labels.")
        logits = convert_to_tensor(logits, name="logits")
        num_classes = _num_classes(logits)
        if blank_index < 0:
            blank_index += num_classes
        if blank_index != num_classes - 1:
            logits = _move_blank(logits, blank_index, to_front=False)
            labels = SparseTensor(
                labels.indices,
                gather_ops.where(math_ops.less(labels.values, blank_index), labels.values,
                                 labels.values - 1),
                labels.dense_shape)
        return ctc_loss(labels=labels, inputs=logits, sequence_length=logit_length,
                        time_major=logits_time_major)
    if blank_index is None:
        blank_index = 0
    with _graph.name_scope(name, "ctc_loss_dense",
                           [logits, labels, label_length, logit_length]):
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        label_length = convert_to_tensor(label_length, name="label_length")
        logit_length = convert_to_tensor(logit_length, name="logit_length")
        if not logits_time_major:
            logits = _transpose(logits)
        if blank_index != 0:
            if blank_index < 0:
                blank_index += _num_classes(logits)
            logits = _move_blank(logits, blank_index, to_front=True)
            labels = gather_ops.where(math_ops.less(labels, blank_index), labels + 1, labels)
        loss, _ = apply_op("_CTCLossDense", logits=logits, labels=labels,
                           label_length=label_length, logit_length=logit_length)
        return loss


# -- label helpers -----------------------------------------------------------------------------
def _collapse_kernel(labels, seq_length):
    labels, seq_length = np.asarray(labels), np.asarray(seq_length)
    batch, maxlen = labels.shape
    rows = []
    for b in range(batch):
        n = min(max(int(seq_length[b]), 0), maxlen)
        row = labels[b, :n]
        keep = np.ones(n, bool)
        keep[1:] = row[1:] != row[:-1]
        rows.append(row[keep])
    new_len = np.array([len(r) for r in rows], seq_length.dtype)
    width = int(new_len.max()) if batch else 0
    out = np.zeros((batch, width), labels.dtype)
    for b, r in enumerate(rows):
        out[b, :len(r)] = r
    return out, new_len


def _collapse_shape(op):
    labels = with_rank(op.inputs[0].shape, 2)
    seq = with_rank(op.inputs[1].shape, 1)
    batch = merge_dim(labels[0], seq[0])
    return [TensorShape([batch, None]), TensorShape([batch])]


register(OpDef(
    "_CollapseRepeatedLabels", inputs=("labels: T", "seq_length: Tlen"),
    outputs=("collapsed: T", "new_length: Tlen"),
    attrs={"T": _dtypes.INTS, "Tlen": _dtypes.INDEX},
    shape=_collapse_shape, host=_collapse_kernel, not_differentiable=True,
))


def collapse_repeated(labels, seq_length, name=None):
    """Merges runs of a repeated label into one: returns (labels [batch, new max length]
    padded with 0, new sequence lengths). Only the first seq_length[b] labels count."""
    with _graph.name_scope(name, "collapse_repeated_labels", [labels, seq_length]):
        labels = convert_to_tensor(labels, name="labels")
        seq_length = convert_to_tensor(seq_length, name="seq_length")
        return tuple(apply_op("_CollapseRepeatedLabels", labels=labels,
                              seq_length=seq_length))


def _unique_lower(labels):
    """Per row: the distinct labels in order of first appearance (padded with 0) and
    each label's index among them, as TF's map_fn over tf.unique computes them."""
    labels = jnp.asarray(labels)
    n = labels.shape[1]
    same = labels[:, :, None] == labels[:, None, :]
    first = jnp.argmax(same, axis=2)  # where each value first appears
    is_first = first == jnp.arange(n)[None, :]
    rank = jnp.cumsum(is_first, axis=1) - 1
    idx = jnp.take_along_axis(rank, first, axis=1).astype(jnp.int32)
    target = jnp.where(is_first, rank, n)
    rows = jnp.broadcast_to(jnp.arange(labels.shape[0])[:, None], labels.shape)
    unique = jnp.zeros(labels.shape, jnp.int64).at[rows, target].set(
        labels.astype(jnp.int64), mode="drop")
    return unique, idx


register(OpDef(
    "_CTCUniqueLabels", inputs=("labels: T",), outputs=("unique: int64", "idx: int32"),
    attrs={"T": _dtypes.INDEX},
    shape=lambda op: [with_rank(op.inputs[0].shape, 2)] * 2,
    lower=_unique_lower, not_differentiable=True,
))


def ctc_unique_labels(labels, name=None):
    """For labels [batch, max_label_length] padded with 0: (unique labels per row in
    order of appearance, padded with 0, as int64; each label's index in them, int32)."""
    with _graph.name_scope(name, "ctc_unique_labels", [labels]):
        labels = convert_to_tensor(labels, name="labels")
        return list(apply_op("_CTCUniqueLabels", labels=labels))  # map_fn's list, as TF
