"""`GatherTree` (tf.contrib.seq2seq.gather_tree): beam search's final backtracking.

Given each step's chosen ids and parent beams `[max_time, batch, beam]`, follow the
parents back from each beam's last step to recover full sequences. TF's CPU kernel
(contrib/seq2seq/kernels/beam_search_ops.cc) fills steps past a batch entry's
max_sequence_length with end_token, and after a beam's first end_token every later id
is end_token too. Here the walk is a reverse `lax.scan` over time, vectorized over
batch and beams.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from tensorflux._src.compiler import effects
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import merge_shapes, with_rank
from tensorflux._src.ops.registry import OpDef, register

__all__ = ["gather_tree"]


def _shape(op):
    step_ids = with_rank(op.inputs[0].shape, 3)
    parent_ids = with_rank(op.inputs[1].shape, 3)
    lengths = with_rank(op.inputs[2].shape, 1)
    with_rank(op.inputs[3].shape, 0)
    merged = merge_shapes(step_ids, parent_ids)
    batch = merged.dims[1].merge_with(lengths.dims[0])
    return merged[:1].concatenate([batch]).concatenate(merged[2:])


def _lower(step_ids, parent_ids, max_sequence_lengths, end_token):
    step_ids, parent_ids = jnp.asarray(step_ids), jnp.asarray(parent_ids)
    max_time, batch, beams = step_ids.shape
    lengths = jnp.minimum(jnp.asarray(max_sequence_lengths, jnp.int32), max_time)
    end = jnp.asarray(end_token, step_ids.dtype)
    if max_time == 0:
        return step_ids

    def back(carry, t):
        beam, bad = carry  # the beam each output beam traces through at step t
        valid = (t < lengths)[:, None]
        out = jnp.where(valid, jnp.take_along_axis(step_ids[t], beam, axis=1), end)
        parent = jnp.take_along_axis(parent_ids[t], beam, axis=1)
        # TF's kernel checks a parent before following it (parent > beam_width fails).
        follow = valid & (t > 0)
        invalid = follow & ((parent < 0) | (parent > beams))
        k = jnp.argmax(invalid.reshape(-1)).astype(jnp.int32)  # first (batch, beam) hit
        found = jnp.stack([k // beams, (t - 1).astype(jnp.int32), k % beams,
                           parent.reshape(-1)[k].astype(jnp.int32)])
        bad = jnp.where(jnp.any(invalid) & (bad[0] < 0), found, bad)
        beam = jnp.where(follow, jnp.clip(parent, 0, beams - 1), beam)
        return (beam, bad), out

    start = jnp.broadcast_to(jnp.arange(beams, dtype=step_ids.dtype), (batch, beams))
    (_, bad), outs = jax.lax.scan(back, (start, jnp.full((4,), -1, jnp.int32)),
                                  jnp.arange(max_time - 1, -1, -1))
    beams_out = outs[::-1]
    effects.check(bad[0] < 0, lambda b: f"Saw invalid parent id {int(b[3])} at (batch, time, "
                  f"beam) == ({int(b[0])}, {int(b[1])}, {int(b[2])})", data=(bad,))
    # After a beam's first end_token, everything is end_token.
    is_end = (beams_out == end).astype(jnp.int32)
    seen_before = jnp.cumsum(is_end, axis=0) - is_end
    return jnp.where(seen_before > 0, end, beams_out)


register(OpDef("GatherTree", inputs=("step_ids: T", "parent_ids: T",
                                     "max_sequence_lengths: int32", "end_token: T"),
               outputs=("beams: T",), attrs={"T": (_dtypes.int32,)}, shape=_shape,
               lower=_lower, not_differentiable=True))


def gather_tree(step_ids, parent_ids, max_sequence_lengths, end_token, name=None):
    """Full beams from per-step ids and parents ([max_time, batch, beam]), as TF's op."""
    with _graph.name_scope(name, "GatherTree"):
        return apply_op("GatherTree", name=name, step_ids=step_ids, parent_ids=parent_ids,
                        max_sequence_lengths=max_sequence_lengths, end_token=end_token)
