"""Helpers for `BasicDecoder`: how each step's sample is drawn and the next input made.

TF1's helpers, with one change of form: the scheduled-sampling helpers mix sampled and
read inputs with `tf.where` instead of TF's `where`/`scatter_nd` over the sampled rows
(those have data-dependent shapes, which a compiled loop body cannot hold); the values
are the same.
"""

from __future__ import annotations

import abc

from tensorflux._src.distributions.bernoulli import Bernoulli
from tensorflux._src.distributions.categorical import Categorical
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import nest
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.layers.base import Layer
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.array.gather_ops import where
from tensorflux._src.ops.array.generator_ops import zeros_like
from tensorflux._src.ops.control.control_flow_ops import cond
from tensorflux._src.ops.control.tensor_array_ops import TensorArray
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.math.reduce_ops import argmax, reduce_all, reduce_any
from tensorflux._src.ops.nn.nn_embedding_ops import embedding_lookup
from tensorflux._src.ops.random.random_ops import random_uniform
from tensorflux._src.seq2seq.decoder import transpose_batch_time

__all__ = ["Helper", "CustomHelper", "TrainingHelper", "GreedyEmbeddingHelper",
           "SampleEmbeddingHelper", "InferenceHelper", "ScheduledEmbeddingTrainingHelper",
           "ScheduledOutputTrainingHelper"]


def _unstack_ta(inp):
    return TensorArray(dtype=inp.dtype, size=array_ops.shape(inp)[0],
                       element_shape=inp.shape[1:]).unstack(inp)


def _embedding_fn(embedding):
    if callable(embedding):
        return embedding
    return lambda ids: embedding_lookup(embedding, ids)


def _sampling_probability(sampling_probability):
    """The scheduled helpers' sampling probability: a scalar or a vector tensor."""
    sampling_probability = convert_to_tensor(sampling_probability,
                                             name="sampling_probability")
    if sampling_probability.shape.ndims not in (0, 1):
        raise ValueError(f"sampling_probability must be either a scalar or a vector. "
                         f"saw shape: {sampling_probability.shape}")
    return sampling_probability


def _check_single_tensor(outputs):
    """The embedding helpers sample from one logits Tensor."""
    if not hasattr(outputs, "op"):
        raise TypeError(f"Expected outputs to be a single Tensor, got: {type(outputs)}")


class Helper(abc.ABC):
    """Interface for sampling in seq2seq decoders (used by `BasicDecoder`)."""

    @property
    @abc.abstractmethod
    def batch_size(self):
        """Batch size of tensor returned by `sample` (a scalar int32 tensor)."""
        raise NotImplementedError("batch_size has not been implemented")

    @property
    @abc.abstractmethod
    def sample_ids_shape(self):
        """Shape of each sample_ids entry, excluding the batch dimension."""
        raise NotImplementedError("sample_ids_shape has not been implemented")

    @property
    @abc.abstractmethod
    def sample_ids_dtype(self):
        """DType of tensor returned by `sample`."""
        raise NotImplementedError("sample_ids_dtype has not been implemented")

    @abc.abstractmethod
    def initialize(self, name=None):
        """Returns `(initial_finished, initial_inputs)`."""

    @abc.abstractmethod
    def sample(self, time, outputs, state, name=None):
        """Returns `sample_ids`."""

    @abc.abstractmethod
    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        """Returns `(finished, next_inputs, next_state)`."""


class CustomHelper(Helper):
    """A helper made of three user functions."""

    def __init__(self, initialize_fn, sample_fn, next_inputs_fn, sample_ids_shape=None,
                 sample_ids_dtype=None):
        self._initialize_fn = initialize_fn
        self._sample_fn = sample_fn
        self._next_inputs_fn = next_inputs_fn
        self._batch_size = None
        self._sample_ids_shape = tensor_shape.TensorShape(sample_ids_shape or [])
        self._sample_ids_dtype = sample_ids_dtype or _dtypes.int32

    @property
    def batch_size(self):
        if self._batch_size is None:
            raise ValueError("batch_size accessed before initialize was called")
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return self._sample_ids_shape

    @property
    def sample_ids_dtype(self):
        return self._sample_ids_dtype

    def initialize(self, name=None):
        with _graph.name_scope(name, f"{type(self).__name__}Initialize"):
            finished, next_inputs = self._initialize_fn()
            if self._batch_size is None:
                self._batch_size = array_ops.size(finished)
        return finished, next_inputs

    def sample(self, time, outputs, state, name=None):
        with _graph.name_scope(name, f"{type(self).__name__}Sample", (time, outputs, state)):
            return self._sample_fn(time=time, outputs=outputs, state=state)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with _graph.name_scope(name, f"{type(self).__name__}NextInputs",
                               (time, outputs, state)):
            return self._next_inputs_fn(time=time, outputs=outputs, state=state,
                                        sample_ids=sample_ids)


class TrainingHelper(Helper):
    """Reads the decoder inputs (teacher forcing); sample_ids are the outputs' argmax."""

    def __init__(self, inputs, sequence_length, time_major=False, name=None):
        with _graph.name_scope(name, "TrainingHelper", [inputs, sequence_length]):
            inputs = nest.map_structure(lambda x: convert_to_tensor(x, name="inputs"), inputs)
            self._inputs = inputs
            if not time_major:
                inputs = nest.map_structure(transpose_batch_time, inputs)
            self._input_tas = nest.map_structure(_unstack_ta, inputs)
            self._sequence_length = convert_to_tensor(sequence_length, name="sequence_length")
            if self._sequence_length.shape.ndims != 1:
                raise ValueError(f"Expected sequence_length to be a vector, but received "
                                 f"shape: {self._sequence_length.shape}")
            self._zero_inputs = nest.map_structure(lambda inp: zeros_like(inp[0, :]), inputs)
            self._batch_size = array_ops.size(sequence_length)

    @property
    def inputs(self):
        return self._inputs

    @property
    def sequence_length(self):
        return self._sequence_length

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return tensor_shape.TensorShape([])

    @property
    def sample_ids_dtype(self):
        return _dtypes.int32

    def initialize(self, name=None):
        with _graph.name_scope(name, "TrainingHelperInitialize"):
            finished = math_ops.equal(0, self._sequence_length)
            return finished, self._inputs_at(finished, 0)

    def sample(self, time, outputs, name=None, **unused_kwargs):
        with _graph.name_scope(name, "TrainingHelperSample", [time, outputs]):
            return math_ops.cast(argmax(outputs, axis=-1), _dtypes.int32)

    def next_inputs(self, time, outputs, state, name=None, **unused_kwargs):
        with _graph.name_scope(name, "TrainingHelperNextInputs", [time, outputs, state]):
            next_time = time + 1
            finished = next_time >= self._sequence_length
            return finished, self._inputs_at(finished, next_time), state

    def _inputs_at(self, finished, time):
        # Zeros once every sequence has finished: the arrays may hold no step `time`.
        return cond(reduce_all(finished), lambda: self._zero_inputs,
                    lambda: nest.map_structure(lambda inp: inp.read(time), self._input_tas))


class ScheduledEmbeddingTrainingHelper(TrainingHelper):
    """TrainingHelper with scheduled sampling: with `sampling_probability`, the next input
    is the embedding of an id sampled from the outputs. sample_ids are -1 where the
    input was read."""

    def __init__(self, inputs, sequence_length, embedding, sampling_probability,
                 time_major=False, seed=None, scheduling_seed=None, name=None):
        with _graph.name_scope(name, "ScheduledEmbeddingSamplingWrapper",
                               [sampling_probability]):
            self._embedding_fn = _embedding_fn(embedding)
            self._sampling_probability = _sampling_probability(sampling_probability)
            self._seed = seed
            self._scheduling_seed = scheduling_seed
            super().__init__(inputs=inputs, sequence_length=sequence_length,
                             time_major=time_major, name=name)

    def sample(self, time, outputs, state, name=None):
        with _graph.name_scope(name, "ScheduledEmbeddingTrainingHelperSample",
                               [time, outputs, state]):
            select_sample = self._sampling_probability > random_uniform(
                array_ops.reshape(self.batch_size, [1]), seed=self._scheduling_seed)
            sampled = Categorical(logits=outputs).sample(seed=self._seed)
            return where(select_sample, sampled, array_ops.tile([-1], [self.batch_size]))

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with _graph.name_scope(name, "ScheduledEmbeddingTrainingHelperNextInputs",
                               [time, outputs, state, sample_ids]):
            finished, base_next_inputs, state = super().next_inputs(
                time=time, outputs=outputs, state=state, sample_ids=sample_ids, name=name)

            def maybe_sample():
                sampled = self._embedding_fn(math_ops.maximum(sample_ids, 0))
                return where(sample_ids > -1, sampled, base_next_inputs)

            next_inputs = cond(reduce_all(finished), lambda: base_next_inputs, maybe_sample)
            return finished, next_inputs, state


class ScheduledOutputTrainingHelper(TrainingHelper):
    """TrainingHelper with scheduled sampling from the outputs themselves (optionally
    through `next_input_layer`); sample_ids say where sampling happened."""

    def __init__(self, inputs, sequence_length, sampling_probability, time_major=False,
                 seed=None, next_input_layer=None, auxiliary_inputs=None, name=None):
        with _graph.name_scope(name, "ScheduledOutputTrainingHelper",
                               [sampling_probability]):
            self._sampling_probability = _sampling_probability(sampling_probability)
            if auxiliary_inputs is None:
                maybe_concatenated_inputs = inputs
            else:
                inputs = convert_to_tensor(inputs, name="inputs")
                auxiliary_inputs = convert_to_tensor(auxiliary_inputs,
                                                     name="auxiliary_inputs")
                maybe_concatenated_inputs = nest.map_structure(
                    lambda x, y: array_ops.concat((x, y), -1), inputs, auxiliary_inputs)
                if not time_major:
                    auxiliary_inputs = nest.map_structure(transpose_batch_time,
                                                          auxiliary_inputs)
            self._auxiliary_input_tas = (nest.map_structure(_unstack_ta, auxiliary_inputs)
                                         if auxiliary_inputs is not None else None)
            self._seed = seed
            if next_input_layer is not None and not isinstance(next_input_layer, Layer):
                raise TypeError(f"next_input_layer must be a Layer, received: "
                                f"{type(next_input_layer)}")
            self._next_input_layer = next_input_layer
            super().__init__(inputs=maybe_concatenated_inputs,
                             sequence_length=sequence_length, time_major=time_major,
                             name=name)

    @property
    def sample_ids_shape(self):
        return tensor_shape.TensorShape([])

    @property
    def sample_ids_dtype(self):
        return _dtypes.bool

    def sample(self, time, outputs, state, name=None):
        with _graph.name_scope(name, "ScheduledOutputTrainingHelperSample",
                               [time, outputs, state]):
            sampler = Bernoulli(probs=self._sampling_probability)
            return math_ops.cast(sampler.sample(sample_shape=self.batch_size,
                                                seed=self._seed), _dtypes.bool)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with _graph.name_scope(name, "ScheduledOutputTrainingHelperNextInputs",
                               [time, outputs, state, sample_ids]):
            finished, base_next_inputs, state = super().next_inputs(
                time=time, outputs=outputs, state=state, sample_ids=sample_ids, name=name)

            def maybe_sample():
                sampled = outputs if self._next_input_layer is None \
                    else self._next_input_layer(outputs)
                if self._auxiliary_input_tas is not None:
                    auxiliary = nest.map_structure(lambda ta: ta.read(time + 1),
                                                   self._auxiliary_input_tas)
                    sampled = nest.map_structure(lambda x, y: array_ops.concat((x, y), -1),
                                                 sampled, auxiliary)
                return where(sample_ids, sampled, base_next_inputs)

            no_samples = math_ops.logical_not(reduce_any(sample_ids))
            next_inputs = cond(math_ops.logical_or(reduce_all(finished), no_samples),
                               lambda: base_next_inputs, maybe_sample)
            return finished, next_inputs, state


class GreedyEmbeddingHelper(Helper):
    """Inference: the argmax of the outputs, embedded, is the next input."""

    def __init__(self, embedding, start_tokens, end_token):
        self._embedding_fn = _embedding_fn(embedding)
        self._start_tokens = convert_to_tensor(start_tokens, dtype=_dtypes.int32,
                                               name="start_tokens")
        self._end_token = convert_to_tensor(end_token, dtype=_dtypes.int32, name="end_token")
        if self._start_tokens.shape.ndims != 1:
            raise ValueError("start_tokens must be a vector")
        self._batch_size = array_ops.size(start_tokens)
        if self._end_token.shape.ndims != 0:
            raise ValueError("end_token must be a scalar")
        self._start_inputs = self._embedding_fn(self._start_tokens)

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return tensor_shape.TensorShape([])

    @property
    def sample_ids_dtype(self):
        return _dtypes.int32

    def initialize(self, name=None):
        finished = array_ops.tile([False], [self._batch_size])
        return finished, self._start_inputs

    def sample(self, time, outputs, state, name=None):
        del time, state
        _check_single_tensor(outputs)
        return math_ops.cast(argmax(outputs, axis=-1), _dtypes.int32)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        del time, outputs
        finished = math_ops.equal(sample_ids, self._end_token)
        next_inputs = cond(reduce_all(finished), lambda: self._start_inputs,
                           lambda: self._embedding_fn(sample_ids))
        return finished, next_inputs, state


class SampleEmbeddingHelper(GreedyEmbeddingHelper):
    """Inference: an id sampled from the outputs (as logits), embedded, is the next input."""

    def __init__(self, embedding, start_tokens, end_token, softmax_temperature=None,
                 seed=None):
        super().__init__(embedding, start_tokens, end_token)
        self._softmax_temperature = softmax_temperature
        self._seed = seed

    def sample(self, time, outputs, state, name=None):
        del time, state
        _check_single_tensor(outputs)
        logits = outputs if self._softmax_temperature is None \
            else outputs / self._softmax_temperature
        return Categorical(logits=logits).sample(seed=self._seed)


class InferenceHelper(Helper):
    """Inference without embeddings: `sample_fn(outputs)` is fed back (through
    `next_inputs_fn`) and `end_fn(sample_ids)` says which sequences finished."""

    def __init__(self, sample_fn, sample_shape, sample_dtype, start_inputs, end_fn,
                 next_inputs_fn=None):
        self._sample_fn = sample_fn
        self._end_fn = end_fn
        self._sample_shape = tensor_shape.TensorShape(sample_shape)
        self._sample_dtype = sample_dtype
        self._next_inputs_fn = next_inputs_fn
        self._batch_size = array_ops.shape(start_inputs)[0]
        self._start_inputs = convert_to_tensor(start_inputs, name="start_inputs")

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return self._sample_shape

    @property
    def sample_ids_dtype(self):
        return self._sample_dtype

    def initialize(self, name=None):
        finished = array_ops.tile([False], [self._batch_size])
        return finished, self._start_inputs

    def sample(self, time, outputs, state, name=None):
        del time, state
        return self._sample_fn(outputs)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        del time, outputs
        next_inputs = sample_ids if self._next_inputs_fn is None \
            else self._next_inputs_fn(sample_ids)
        return self._end_fn(sample_ids), next_inputs, state
