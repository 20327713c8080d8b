"""`tf.reverse_sequence`: reverses the first `seq_lengths[b]` steps of each sequence.

Used by the bidirectional RNN drivers (the backward direction reads each sequence from
its last valid step); one record, its own gradient.
"""

from __future__ import annotations

import jax.numpy as jnp

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, REQUIRED, register

__all__ = ["reverse_sequence"]


def _shape(op):
    x, lengths = op.inputs
    lengths.shape.with_rank(1)
    seq_dim, batch_dim = op.get_attr("seq_dim"), op.get_attr("batch_dim")
    if x.shape.ndims is not None:
        rank = x.shape.ndims
        if not (0 <= seq_dim < rank and 0 <= batch_dim < rank) or seq_dim == batch_dim:
            raise ValueError(f"Invalid seq_dim {seq_dim} and batch_dim {batch_dim} for an "
                             f"input of rank {rank}")
        x.shape[batch_dim].assert_is_compatible_with(lengths.shape[0])
    return x.shape


def _lower(input, seq_lengths, seq_dim, batch_dim):
    steps = jnp.arange(input.shape[seq_dim])
    lengths = jnp.asarray(seq_lengths).astype(jnp.int32)[:, None]  # [batch, 1]
    source = jnp.where(steps[None, :] < lengths, lengths - 1 - steps[None, :], steps[None, :])
    if seq_dim < batch_dim:
        source = source.T
    index_shape = [1] * input.ndim
    index_shape[batch_dim], index_shape[seq_dim] = input.shape[batch_dim], input.shape[seq_dim]
    source = jnp.broadcast_to(source.reshape(index_shape), input.shape)
    return jnp.take_along_axis(input, source, axis=seq_dim)


def _grad(op, dy):
    return [reverse_sequence(dy, op.inputs[1], seq_axis=op.get_attr("seq_dim"),
                             batch_axis=op.get_attr("batch_dim")), None]


register(OpDef("ReverseSequence", inputs=("input: T", "seq_lengths: Tlen"),
               outputs=("output: T",),
               attrs={"T": _dtypes.ALL, "Tlen": _dtypes.INDEX,
                      "seq_dim": REQUIRED, "batch_dim": 0},
               shape=_shape, lower=_lower, grad=_grad, strings_by_rank=True))


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None,
                     seq_dim=None, batch_dim=None):
    """Reverses `input[b, :seq_lengths[b]]` along seq_axis for each b along batch_axis."""
    seq_axis = seq_axis if seq_axis is not None else seq_dim
    batch_axis = batch_axis if batch_axis is not None else batch_dim
    if seq_axis is None:
        raise TypeError("reverse_sequence() missing required argument 'seq_axis'")
    return apply_op("ReverseSequence", name=name, input=input, seq_lengths=seq_lengths,
                    seq_dim=int(seq_axis), batch_dim=int(batch_axis or 0))
