"""`BeamSearchDecoder`: TF1's beam search over an RNN cell, and `tile_batch`.

Each step expands every live beam by the vocabulary, scores the candidates (log
probabilities, with GNMT's length and coverage penalties), keeps the `beam_width` best
per batch entry and reorders the cell state to follow them; `finalize` backtracks the
parent pointers with `gather_tree`. Finished beams only extend with end_token at no
cost, so `dynamic_decode` stops when every beam has finished.
"""

from __future__ import annotations

import collections

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import nest
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.layers.base import Layer
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.array.gather_ops import gather, gather_nd, one_hot, where
from tensorflux._src.ops.array.generator_ops import fill, ones_like, zeros
from tensorflux._src.ops.array.layout import sequence_mask
from tensorflux._src.ops.array.sort_ops import top_k
from tensorflux._src.ops.control.control_flow_ops import cond
from tensorflux._src.ops.control.tensor_array_ops import TensorArray
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.math.reduce_ops import reduce_all, reduce_max, reduce_mean, reduce_sum
from tensorflux._src.ops.nn.gather_tree import gather_tree
from tensorflux._src.ops.nn.nn_embedding_ops import embedding_lookup
from tensorflux._src.ops.nn.nn_ops import log_softmax
from tensorflux._src.ops.nn.rnn import _check_cell
from tensorflux._src.ops.shape_fns import static_value
from tensorflux._src.platform import tf_logging
from tensorflux._src.seq2seq import attention_wrapper
from tensorflux._src.seq2seq.basic_decoder import rnn_output_size
from tensorflux._src.seq2seq.decoder import Decoder

__all__ = ["BeamSearchDecoderOutput", "BeamSearchDecoderState", "BeamSearchDecoder",
           "FinalBeamSearchDecoderOutput", "tile_batch", "gather_tree_from_array"]


class BeamSearchDecoderState(collections.namedtuple(
        "BeamSearchDecoderState", ("cell_state", "log_probs", "finished", "lengths",
                                   "accumulated_attention_probs"))):
    pass


class BeamSearchDecoderOutput(collections.namedtuple(
        "BeamSearchDecoderOutput", ("scores", "predicted_ids", "parent_ids"))):
    pass


class FinalBeamSearchDecoderOutput(collections.namedtuple(
        "FinalBeamDecoderOutput", ["predicted_ids", "beam_search_decoder_output"])):
    """The final beams (`predicted_ids`, best first) and the per-step search outputs."""


def _tile_batch(t, multiplier):
    t = convert_to_tensor(t, name="t")
    shape_t = array_ops.shape(t)
    if t.shape.ndims is None or t.shape.ndims < 1:
        raise ValueError("t must have statically known rank")
    tiling = [1] * (t.shape.ndims + 1)
    tiling[1] = multiplier
    static_batch = t.shape[0].value * multiplier if t.shape[0].value is not None else None
    tiled = array_ops.tile(array_ops.expand_dims(t, 1), tiling)
    tiled = array_ops.reshape(tiled, array_ops.concat(([shape_t[0] * multiplier],
                                                       shape_t[1:]), 0))
    tiled.set_shape(tensor_shape.TensorShape([static_batch]).concatenate(t.shape[1:]))
    return tiled


def tile_batch(t, multiplier, name=None):
    """Repeats each batch entry of (a structure of) tensors `multiplier` times in place:
    `[batch, ...]` becomes `[batch * multiplier, ...]` as t[0], t[0], ..., t[1], ..."""
    flat_t = nest.flatten(t)
    with _graph.name_scope(name, "tile_batch", flat_t + [multiplier]):
        return nest.map_structure(lambda t_: _tile_batch(t_, multiplier), t)


def gather_tree_from_array(t, parent_ids, sequence_length):
    """Reorders a stacked array `[max_time, batch * beam, ...]` (or `[max_time, batch,
    beam, ...]`) along the beams the search kept (`parent_ids`)."""
    max_time = parent_ids.shape[0].value or array_ops.shape(parent_ids)[0]
    batch_size = parent_ids.shape[1].value or array_ops.shape(parent_ids)[1]
    beam_width = parent_ids.shape[2].value or array_ops.shape(parent_ids)[2]
    beam_ids = array_ops.tile(array_ops.expand_dims(array_ops.expand_dims(
        math_ops.range(beam_width), 0), 0), [max_time, batch_size, 1])
    max_sequence_lengths = math_ops.cast(reduce_max(sequence_length, axis=1), _dtypes.int32)
    sorted_beam_ids = gather_tree(step_ids=beam_ids, parent_ids=parent_ids,
                                  max_sequence_lengths=max_sequence_lengths,
                                  end_token=beam_width + 1)
    in_bound_steps = array_ops.transpose(sequence_mask(sequence_length, maxlen=max_time),
                                         perm=[2, 0, 1])
    sorted_beam_ids = where(in_bound_steps, sorted_beam_ids, beam_ids)
    time_ind = array_ops.tile(array_ops.reshape(math_ops.range(max_time), [-1, 1, 1]),
                              [1, batch_size, beam_width])
    batch_ind = array_ops.transpose(array_ops.tile(array_ops.reshape(
        math_ops.range(batch_size), [-1, 1, 1]), [1, max_time, beam_width]), perm=[1, 0, 2])
    indices = array_ops.stack([time_ind, batch_ind, sorted_beam_ids], -1)
    final_shape = array_ops.shape(t)
    gather_from = array_ops.reshape(t, [max_time, batch_size, beam_width, -1])
    return array_ops.reshape(gather_nd(gather_from, indices), final_shape)


def _check_ndims(t):
    if t.shape.ndims is None:
        raise ValueError(f"Expected tensor ({t}) to have known rank, but ndims == None.")


class BeamSearchDecoder(Decoder):
    """Beam search decoding. With an AttentionWrapper cell, tile the memory, its lengths
    and the initial cell state with `tile_batch` and create the wrapper's zero_state with
    `batch_size = true_batch_size * beam_width`."""

    def __init__(self, cell, embedding, start_tokens, end_token, initial_state, beam_width,
                 output_layer=None, length_penalty_weight=0.0, coverage_penalty_weight=0.0,
                 reorder_tensor_arrays=True):
        _check_cell("cell", cell)
        if output_layer is not None and not isinstance(output_layer, Layer):
            raise TypeError(f"output_layer must be a Layer, received: {type(output_layer)}")
        self._cell = cell
        self._output_layer = output_layer
        self._reorder_tensor_arrays = reorder_tensor_arrays
        self._embedding_fn = embedding if callable(embedding) \
            else (lambda ids: embedding_lookup(embedding, ids))
        self._start_tokens = convert_to_tensor(start_tokens, dtype=_dtypes.int32,
                                               name="start_tokens")
        if self._start_tokens.shape.ndims != 1:
            raise ValueError("start_tokens must be a vector")
        self._end_token = convert_to_tensor(end_token, dtype=_dtypes.int32, name="end_token")
        if self._end_token.shape.ndims != 0:
            raise ValueError("end_token must be a scalar")
        self._beam_width = beam_width
        self._length_penalty_weight = length_penalty_weight
        self._coverage_penalty_weight = coverage_penalty_weight
        self._batch_size = array_ops.size(start_tokens)
        self._initial_cell_state = nest.map_structure(self._maybe_split_batch_beams,
                                                      initial_state, self._cell.state_size)
        self._start_tokens = array_ops.tile(array_ops.expand_dims(self._start_tokens, 1),
                                            [1, self._beam_width])
        self._start_inputs = self._embedding_fn(self._start_tokens)
        self._finished = one_hot(zeros([self._batch_size], dtype=_dtypes.int32),
                                 depth=self._beam_width, on_value=False, off_value=True,
                                 dtype=_dtypes.bool)

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def tracks_own_finished(self):
        """Beams move between steps, so the decoder keeps its own finished flags."""
        return True

    @property
    def output_size(self):
        shape = tensor_shape.TensorShape([self._beam_width])
        return BeamSearchDecoderOutput(scores=shape, predicted_ids=shape, parent_ids=shape)

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_cell_state)[0].dtype
        return BeamSearchDecoderOutput(
            scores=nest.map_structure(lambda _: dtype,
                                      rnn_output_size(self._cell, self._output_layer)),
            predicted_ids=_dtypes.int32, parent_ids=_dtypes.int32)

    def initialize(self, name=None):
        """Returns `(finished, start_inputs, initial_state)`."""
        finished, start_inputs = self._finished, self._start_inputs
        dtype = nest.flatten(self._initial_cell_state)[0].dtype
        log_probs = one_hot(zeros([self._batch_size], dtype=_dtypes.int32),
                            depth=self._beam_width,
                            on_value=convert_to_tensor(0.0, dtype=dtype),
                            off_value=convert_to_tensor(-np.inf, dtype=dtype), dtype=dtype)
        init_attention_probs = get_attention_probs(self._initial_cell_state,
                                                   self._coverage_penalty_weight)
        if init_attention_probs is None:
            init_attention_probs = ()
        initial_state = BeamSearchDecoderState(
            cell_state=self._initial_cell_state, log_probs=log_probs, finished=finished,
            lengths=zeros([self._batch_size, self._beam_width], dtype=_dtypes.int64),
            accumulated_attention_probs=init_attention_probs)
        return finished, start_inputs, initial_state

    def finalize(self, outputs, final_state, sequence_lengths):
        """Backtracks the beams: `FinalBeamSearchDecoderOutput` and the final state."""
        del sequence_lengths  # the lengths are final_state.lengths
        max_sequence_lengths = math_ops.cast(reduce_max(final_state.lengths, axis=1),
                                             _dtypes.int32)
        predicted_ids = gather_tree(outputs.predicted_ids, outputs.parent_ids,
                                    max_sequence_lengths=max_sequence_lengths,
                                    end_token=self._end_token)
        if self._reorder_tensor_arrays:
            final_state = final_state._replace(cell_state=nest.map_structure(
                lambda t: self._maybe_sort_array_beams(t, outputs.parent_ids,
                                                       final_state.lengths),
                final_state.cell_state))
        return FinalBeamSearchDecoderOutput(beam_search_decoder_output=outputs,
                                            predicted_ids=predicted_ids), final_state

    # -- reshaping between [batch * beam, ...] and [batch, beam, ...] ----------------------
    def _static_batch(self):
        value = static_value(self._batch_size)
        return None if value is None else int(value)

    def _merge_batch_beams(self, t, s=None):
        s = tensor_shape.as_shape(static_value(s)) if isinstance(s, Tensor) \
            else tensor_shape.TensorShape(s)
        static = self._static_batch()
        reshaped = array_ops.reshape(t, array_ops.concat(
            ([self._batch_size * self._beam_width], array_ops.shape(t)[2:]), 0))
        reshaped.set_shape(tensor_shape.TensorShape(
            [None if static is None else static * self._beam_width]).concatenate(s))
        return reshaped

    def _split_batch_beams(self, t, s=None):
        s = tensor_shape.TensorShape(static_value(s)) if isinstance(s, Tensor) \
            else tensor_shape.TensorShape(s)
        reshaped = array_ops.reshape(t, array_ops.concat(
            ([self._batch_size, self._beam_width], array_ops.shape(t)[1:]), 0))
        expected = tensor_shape.TensorShape([self._static_batch(), self._beam_width]) \
            .concatenate(s)
        if not reshaped.shape.is_compatible_with(expected):
            raise ValueError(f"Unexpected behavior when reshaping between beam width and batch "
                             f"size.  The reshaped tensor has shape: {reshaped.shape}.  We "
                             f"expected it to have shape (batch_size, beam_width, depth) == "
                             f"{expected}.  Perhaps you forgot to create a zero_state with "
                             f"batch_size=encoder_batch_size * beam_width?")
        reshaped.set_shape(expected)
        return reshaped

    def _maybe_split_batch_beams(self, t, s):
        if isinstance(t, TensorArray):
            return t
        _check_ndims(t)
        return self._split_batch_beams(t, s) if t.shape.ndims >= 1 else t

    def _maybe_merge_batch_beams(self, t, s):
        if isinstance(t, TensorArray):
            return t
        _check_ndims(t)
        return self._merge_batch_beams(t, s) if t.shape.ndims >= 2 else t

    def _maybe_sort_array_beams(self, t, parent_ids, sequence_length):
        """A TensorArray in the cell state, stacked and reordered along the kept beams
        (when its elements are [batch * beam, ...] or [batch, beam, ...])."""
        if not isinstance(t, TensorArray):
            return t
        shape = t.element_shape
        if shape.ndims is None or shape.ndims < 1:
            tf_logging.warning(f"The TensorArray {t.handle.name} in the cell state is not "
                               f"amenable to sorting based on the beam search result. For a "
                               f"TensorArray to be sorted, its elements shape must be defined "
                               f"and have at least a rank of 1, but saw shape: {shape}")
            return t
        static = self._static_batch()
        if static is not None and shape[0].value is not None and (
                shape[0].value != static * self._beam_width
                and not (shape.ndims >= 2 and shape[0].value == static
                         and shape[1].value == self._beam_width)):
            tf_logging.warning(f"TensorArray reordering expects elements to be reshapable to "
                               f"[{static}, {self._beam_width}, ?] which is incompatible "
                               f"with the current shape {shape}. Consider setting "
                               f"reorder_tensor_arrays to False to disable TensorArray "
                               f"reordering during the beam search.")
            return t
        return gather_tree_from_array(t.stack(), parent_ids, sequence_length)

    def step(self, time, inputs, state, name=None):
        """Returns `(outputs, next_state, next_inputs, finished)`."""
        with _graph.name_scope(name, "BeamSearchDecoderStep", (time, inputs, state)):
            cell_state = state.cell_state
            inputs = nest.map_structure(lambda inp: self._merge_batch_beams(
                inp, s=inp.shape[2:]), inputs)
            cell_state = nest.map_structure(self._maybe_merge_batch_beams, cell_state,
                                            self._cell.state_size)
            cell_outputs, next_cell_state = self._cell(inputs, cell_state)
            cell_outputs = nest.map_structure(
                lambda out: self._split_batch_beams(out, out.shape[1:]), cell_outputs)
            next_cell_state = nest.map_structure(self._maybe_split_batch_beams,
                                                 next_cell_state, self._cell.state_size)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            beam_search_output, beam_search_state = _beam_search_step(
                time=time, logits=cell_outputs, next_cell_state=next_cell_state,
                beam_state=state, batch_size=self._batch_size, beam_width=self._beam_width,
                end_token=self._end_token, length_penalty_weight=self._length_penalty_weight,
                coverage_penalty_weight=self._coverage_penalty_weight)
            finished = beam_search_state.finished
            sample_ids = beam_search_output.predicted_ids
            next_inputs = cond(reduce_all(finished), lambda: self._start_inputs,
                               lambda: self._embedding_fn(sample_ids))
        return beam_search_output, beam_search_state, next_inputs, finished


def _beam_search_step(time, logits, next_cell_state, beam_state, batch_size, beam_width,
                      end_token, length_penalty_weight, coverage_penalty_weight):
    """One step of beam search; returns (BeamSearchDecoderOutput, BeamSearchDecoderState)."""
    known = static_value(batch_size)
    static_batch_size = None if known is None else int(known)
    prediction_lengths = beam_state.lengths
    previously_finished = beam_state.finished
    not_finished = math_ops.logical_not(previously_finished)
    step_log_probs = _mask_probs(log_softmax(logits), end_token, previously_finished)
    total_probs = array_ops.expand_dims(beam_state.log_probs, 2) + step_log_probs
    vocab_size = logits.shape[-1].value or array_ops.shape(logits)[-1]
    lengths_to_add = one_hot(indices=fill([batch_size, beam_width], end_token),
                             depth=vocab_size, on_value=np.int64(0), off_value=np.int64(1),
                             dtype=_dtypes.int64)
    lengths_to_add *= array_ops.expand_dims(math_ops.cast(not_finished, _dtypes.int64), 2)
    new_prediction_lengths = lengths_to_add + array_ops.expand_dims(prediction_lengths, 2)

    accumulated_attention_probs = None
    attention_probs = get_attention_probs(next_cell_state, coverage_penalty_weight)
    if attention_probs is not None:
        attention_probs *= array_ops.expand_dims(math_ops.cast(not_finished, _dtypes.float32),
                                                 2)
        accumulated_attention_probs = beam_state.accumulated_attention_probs + attention_probs

    scores = _get_scores(log_probs=total_probs, sequence_lengths=new_prediction_lengths,
                         length_penalty_weight=length_penalty_weight,
                         coverage_penalty_weight=coverage_penalty_weight,
                         finished=previously_finished,
                         accumulated_attention_probs=accumulated_attention_probs)
    time = convert_to_tensor(time, name="time")
    scores_flat = array_ops.reshape(scores, [batch_size, -1])
    next_beam_size = convert_to_tensor(beam_width, dtype=_dtypes.int32, name="beam_width")
    next_beam_scores, word_indices = top_k(scores_flat, k=next_beam_size)
    next_beam_scores.set_shape([static_batch_size, beam_width])
    word_indices.set_shape([static_batch_size, beam_width])

    next_beam_probs = _tensor_gather_helper(
        gather_indices=word_indices, gather_from=total_probs, batch_size=batch_size,
        range_size=beam_width * vocab_size, gather_shape=[-1], name="next_beam_probs")
    raw_next_word_ids = math_ops.mod(word_indices, vocab_size, name="next_beam_word_ids")
    next_word_ids = math_ops.cast(raw_next_word_ids, _dtypes.int32)
    next_beam_ids = math_ops.cast(math_ops.floordiv(word_indices, vocab_size), _dtypes.int32,
                                  name="next_beam_parent_ids")
    previously_finished = _tensor_gather_helper(
        gather_indices=next_beam_ids, gather_from=previously_finished,
        batch_size=batch_size, range_size=beam_width, gather_shape=[-1])
    next_finished = math_ops.logical_or(previously_finished,
                                        math_ops.equal(next_word_ids, end_token),
                                        name="next_beam_finished")
    # Finished beams keep their length; beams finishing now, or continuing, grow by one.
    lengths_to_add = math_ops.cast(math_ops.logical_not(previously_finished), _dtypes.int64)
    next_prediction_len = _tensor_gather_helper(
        gather_indices=next_beam_ids, gather_from=beam_state.lengths, batch_size=batch_size,
        range_size=beam_width, gather_shape=[-1]) + lengths_to_add
    next_accumulated_attention_probs = ()
    if accumulated_attention_probs is not None:
        next_accumulated_attention_probs = _tensor_gather_helper(
            gather_indices=next_beam_ids, gather_from=accumulated_attention_probs,
            batch_size=batch_size, range_size=beam_width,
            gather_shape=[batch_size * beam_width, -1],
            name="next_accumulated_attention_probs")
    next_cell_state = nest.map_structure(
        lambda gather_from: _maybe_tensor_gather_helper(
            gather_indices=next_beam_ids, gather_from=gather_from, batch_size=batch_size,
            range_size=beam_width, gather_shape=[batch_size * beam_width, -1]),
        next_cell_state)
    next_state = BeamSearchDecoderState(
        cell_state=next_cell_state, log_probs=next_beam_probs, lengths=next_prediction_len,
        finished=next_finished, accumulated_attention_probs=next_accumulated_attention_probs)
    output = BeamSearchDecoderOutput(scores=next_beam_scores, predicted_ids=next_word_ids,
                                     parent_ids=next_beam_ids)
    return output, next_state


def get_attention_probs(next_cell_state, coverage_penalty_weight):
    """The attention probabilities `[batch, beam, max_time]` in an attentional cell state
    (averaged over several mechanisms), or None without coverage penalty."""
    if coverage_penalty_weight == 0.0:
        return None
    probs = []
    if isinstance(next_cell_state, attention_wrapper.AttentionWrapperState):
        probs = [attention_probs_from_attn_state(next_cell_state)]
    elif isinstance(next_cell_state, tuple):
        probs = [attention_probs_from_attn_state(s) for s in next_cell_state
                 if isinstance(s, attention_wrapper.AttentionWrapperState)]
    if not probs:
        raise ValueError("coverage_penalty_weight must be 0.0 if no cell is attentional.")
    if len(probs) == 1:
        return probs[0]
    return reduce_mean(array_ops.concat([array_ops.expand_dims(p, -1) for p in probs], -1), -1)


def attention_probs_from_attn_state(attention_state):
    """The alignments of an AttentionWrapperState (averaged over mechanisms)."""
    probs = attention_state.alignments
    if isinstance(probs, tuple):
        probs = reduce_mean(array_ops.concat([array_ops.expand_dims(p, -1) for p in probs],
                                             -1), -1)
    return probs


def _get_scores(log_probs, sequence_lengths, length_penalty_weight, coverage_penalty_weight,
                finished, accumulated_attention_probs):
    """log_probs / length penalty, plus the weighted coverage penalty of finished beams."""
    penalty = math_ops.cast(_length_penalty(sequence_lengths, length_penalty_weight),
                            log_probs.dtype)
    scores = log_probs / penalty
    coverage_penalty_weight = convert_to_tensor(coverage_penalty_weight,
                                                name="coverage_penalty_weight")
    if coverage_penalty_weight.shape.ndims != 0:
        raise ValueError(f"coverage_penalty_weight should be a scalar, but saw shape: "
                         f"{coverage_penalty_weight.shape}")
    if static_value(coverage_penalty_weight) == 0.0:
        return scores
    if accumulated_attention_probs is None:
        raise ValueError("accumulated_attention_probs can be None only if coverage penalty "
                         "is disabled.")
    # Positions never attended (padding) count as fully covered.
    accumulated_attention_probs = where(math_ops.equal(accumulated_attention_probs, 0.0),
                                        ones_like(accumulated_attention_probs),
                                        accumulated_attention_probs)
    coverage_penalty = reduce_sum(math_ops.log(math_ops.minimum(accumulated_attention_probs,
                                                                1.0)), 2)
    coverage_penalty *= math_ops.cast(finished, _dtypes.float32)
    weighted = array_ops.expand_dims(coverage_penalty * coverage_penalty_weight, 2)
    return scores + weighted


def _length_penalty(sequence_lengths, penalty_factor):
    """GNMT's length penalty ((5 + length) / 6) ** penalty_factor (1.0 when 0)."""
    penalty_factor = convert_to_tensor(penalty_factor, name="penalty_factor")
    penalty_factor.set_shape(())
    static_penalty = static_value(penalty_factor)
    if static_penalty is not None and static_penalty == 0:
        return 1.0
    return math_ops.div((5. + math_ops.cast(sequence_lengths, _dtypes.float32))
                        ** penalty_factor, (5. + 1.) ** penalty_factor)


def _mask_probs(probs, eos_token, finished):
    """Finished beams put all their probability on eos; others are unchanged."""
    vocab_size = array_ops.shape(probs)[2]
    finished_row = one_hot(eos_token, vocab_size, dtype=probs.dtype,
                           on_value=convert_to_tensor(0., dtype=probs.dtype),
                           off_value=probs.dtype.min)
    finished_probs = array_ops.tile(array_ops.reshape(finished_row, [1, 1, -1]),
                                    array_ops.concat([array_ops.shape(finished), [1]], 0))
    finished_mask = array_ops.tile(array_ops.expand_dims(finished, 2), [1, 1, vocab_size])
    return where(finished_mask, finished_probs, probs)


def _maybe_tensor_gather_helper(gather_indices, gather_from, batch_size, range_size,
                                gather_shape):
    if isinstance(gather_from, TensorArray):
        return gather_from
    _check_ndims(gather_from)
    if gather_from.shape.ndims >= len(gather_shape):
        return _tensor_gather_helper(gather_indices=gather_indices, gather_from=gather_from,
                                     batch_size=batch_size, range_size=range_size,
                                     gather_shape=gather_shape)
    return gather_from


def _tensor_gather_helper(gather_indices, gather_from, batch_size, range_size, gather_shape,
                          name=None):
    """gather_from's entries at gather_indices within each batch entry's range."""
    with _graph.name_scope(name, "tensor_gather_helper"):
        range_ = array_ops.expand_dims(math_ops.range(batch_size) * range_size, 1)
        gather_indices = array_ops.reshape(gather_indices + range_, [-1])
        output = gather(array_ops.reshape(gather_from, gather_shape), gather_indices)
        final_shape = array_ops.shape(gather_from)[:1 + len(gather_shape)]
        known = static_value(batch_size)
        final_static_shape = tensor_shape.TensorShape([None if known is None else int(known)]) \
            .concatenate(gather_from.shape[1:1 + len(gather_shape)])
        output = array_ops.reshape(output, final_shape, name="output")
        output.set_shape(final_static_shape)
        return output
