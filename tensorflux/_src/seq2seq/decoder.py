"""`Decoder` and `dynamic_decode`: TF1's decoding loop, one `tf.while_loop` writing its
outputs into dynamic-size TensorArrays.

The loop runs until every sequence finished (or `maximum_iterations`). Its trip count
is known only when it runs, so it compiles with a cap on its iterations that doubles
when a run needs more (compiler/ta_buffer.run_loop); that cap also makes it
differentiable, so a decoder trains through `dynamic_decode` as in TF1. The stacked
outputs' time dimension is the loop's trip count: `stack()` gets the arrays' size on the
host, and what follows compiles for that length.
"""

from __future__ import annotations

import abc

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import nest
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.array.gather_ops import where
from tensorflux._src.ops.array.generator_ops import fill, zeros_like
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.control.control_flow_ops import while_loop
from tensorflux._src.ops.control.tensor_array_ops import TensorArray
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.math.reduce_ops import reduce_all
from tensorflux._src.ops.nn.rnn import _swap_batch_time
from tensorflux._src.ops.nn.rnn_cell_impl import _zeros
from tensorflux._src.ops.shape_fns import static_value
from tensorflux._src.train import variable_scope as vs

__all__ = ["Decoder", "dynamic_decode"]


def transpose_batch_time(x):
    """[batch, time, ...] <-> [time, batch, ...] (rank-1 tensors pass unchanged)."""
    if x.shape.ndims is not None and x.shape.ndims < 2:
        return x
    return _swap_batch_time(x)


class Decoder(abc.ABC):
    """An RNN decoder: `initialize()` once, then `step()` until finished.

    - `initialize(name=None)` returns `(finished, initial_inputs, initial_state)`;
    - `step(time, inputs, state, name=None)` returns
      `(outputs, next_state, next_inputs, finished)`;
    - `finalize(outputs, final_state, sequence_lengths)` (optional) post-processes.
    """

    @property
    def batch_size(self):
        """The batch size of input values."""
        raise NotImplementedError

    @property
    def output_size(self):
        """A (possibly nested tuple of...) integer[s] or `TensorShape` object[s]."""
        raise NotImplementedError

    @property
    def output_dtype(self):
        """A (possibly nested tuple of...) dtype[s]."""
        raise NotImplementedError

    @abc.abstractmethod
    def initialize(self, name=None):
        """Returns `(finished, initial_inputs, initial_state)`."""
        raise NotImplementedError

    @abc.abstractmethod
    def step(self, time, inputs, state, name=None):
        """Returns `(outputs, next_state, next_inputs, finished)`."""
        raise NotImplementedError

    def finalize(self, outputs, final_state, sequence_lengths):
        raise NotImplementedError

    @property
    def tracks_own_finished(self):
        """Whether the decoder keeps its own finished flags (beam search reorders them)."""
        return False


def _create_zero_outputs(size, dtype, batch_size):
    return nest.map_structure(lambda s, d: _zeros(batch_size, s, d), size, dtype)


def _element_shape(batch_size, from_shape):
    if not isinstance(from_shape, tensor_shape.TensorShape) or from_shape.ndims == 0:
        return tensor_shape.TensorShape(None)
    batch = static_value(convert_to_tensor(batch_size, name="batch_size"))
    return tensor_shape.TensorShape([None if batch is None else int(batch)]).concatenate(
        from_shape)


def dynamic_decode(decoder, output_time_major=False, impute_finished=False,
                   maximum_iterations=None, parallel_iterations=32, swap_memory=False,
                   scope=None):
    """Runs `decoder` until it finishes (or `maximum_iterations` steps).

    Returns `(final_outputs, final_state, final_sequence_lengths)`; outputs are batch
    major unless `output_time_major`.
    """
    if not isinstance(decoder, Decoder):
        raise TypeError(f"Expected decoder to be type Decoder, but saw: {type(decoder)}")
    with vs.variable_scope(scope, "decoder"):
        if maximum_iterations is not None:
            maximum_iterations = convert_to_tensor(maximum_iterations, dtype=_dtypes.int32,
                                                   name="maximum_iterations")
            if maximum_iterations.shape.ndims != 0:
                raise ValueError("maximum_iterations must be a scalar")
        initial_finished, initial_inputs, initial_state = decoder.initialize()
        zero_outputs = _create_zero_outputs(decoder.output_size, decoder.output_dtype,
                                            decoder.batch_size)
        if maximum_iterations is not None:
            initial_finished = math_ops.logical_or(initial_finished, 0 >= maximum_iterations)
        initial_sequence_lengths = zeros_like(initial_finished, dtype=_dtypes.int32)
        initial_time = constant(0, dtype=_dtypes.int32)
        initial_outputs_ta = nest.map_structure(
            lambda s, d: TensorArray(dtype=d, size=0, dynamic_size=True,
                                     element_shape=_element_shape(decoder.batch_size, s)),
            decoder.output_size, decoder.output_dtype)

        def condition(unused_time, unused_outputs_ta, unused_state, unused_inputs, finished,
                      unused_sequence_lengths):
            return math_ops.logical_not(reduce_all(finished))

        def body(time, outputs_ta, state, inputs, finished, sequence_lengths):
            next_outputs, decoder_state, next_inputs, decoder_finished = decoder.step(
                time, inputs, state)
            if decoder.tracks_own_finished:
                next_finished = decoder_finished
            else:
                next_finished = math_ops.logical_or(decoder_finished, finished)
            next_sequence_lengths = where(
                math_ops.logical_not(finished),
                fill(array_ops.shape(sequence_lengths), time + 1), sequence_lengths)
            nest.assert_same_structure(state, decoder_state)
            nest.assert_same_structure(outputs_ta, next_outputs)
            nest.assert_same_structure(inputs, next_inputs)
            if impute_finished:  # finished entries emit zeros and keep their state
                emit = nest.map_structure(lambda out, zero: where(finished, zero, out),
                                          next_outputs, zero_outputs)

                def maybe_copy_state(new, cur):
                    if isinstance(cur, TensorArray):
                        return new
                    new.set_shape(cur.shape)
                    return new if new.shape.ndims == 0 else where(finished, cur, new)

                next_state = nest.map_structure(maybe_copy_state, decoder_state, state)
            else:
                emit, next_state = next_outputs, decoder_state
            outputs_ta = nest.map_structure(lambda ta, out: ta.write(time, out), outputs_ta,
                                            emit)
            return (time + 1, outputs_ta, next_state, next_inputs, next_finished,
                    next_sequence_lengths)

        res = while_loop(condition, body,
                         loop_vars=(initial_time, initial_outputs_ta, initial_state,
                                    initial_inputs, initial_finished,
                                    initial_sequence_lengths),
                         parallel_iterations=parallel_iterations,
                         maximum_iterations=maximum_iterations, swap_memory=swap_memory)
        final_outputs_ta, final_state, final_sequence_lengths = res[1], res[2], res[5]
        final_outputs = nest.map_structure(lambda ta: ta.stack(), final_outputs_ta)
        try:
            final_outputs, final_state = decoder.finalize(final_outputs, final_state,
                                                          final_sequence_lengths)
        except NotImplementedError:
            pass
        if not output_time_major:
            final_outputs = nest.map_structure(transpose_batch_time, final_outputs)
    return final_outputs, final_state, final_sequence_lengths
