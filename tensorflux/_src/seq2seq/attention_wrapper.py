"""Attention for seq2seq decoders: Bahdanau and Luong mechanisms and `AttentionWrapper`.

TF1's contrib implementation, with its variable names, so checkpoints line up: a
mechanism's `memory_layer` is made where the mechanism is constructed; inside the
wrapper's scope the query side is `bahdanau_attention/{query_layer/kernel,
attention_v, attention_g, attention_b}` or `luong_attention/attention_g`, and the
output projection `attention_layer/kernel`.
"""

from __future__ import annotations

import collections
import math

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import nest
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.layers.base import Layer
from tensorflux._src.layers.core import Dense
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.array.gather_ops import one_hot, where
from tensorflux._src.ops.array.generator_ops import ones, ones_like, zeros
from tensorflux._src.ops.array.layout import sequence_mask
from tensorflux._src.ops.control.functional_ops import scan
from tensorflux._src.ops.control.tensor_array_ops import TensorArray
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.linalg.linalg_ops import matmul
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.math.math_ops import clip_by_value
from tensorflux._src.ops.math.reduce_ops import argmax, cumprod, cumsum, reduce_sum
from tensorflux._src.ops.nn.nn_ops import softmax
from tensorflux._src.ops.nn.rnn import _check_cell
from tensorflux._src.ops.nn.rnn_cell_impl import RNNCell, _zeros, map_state_size
from tensorflux._src.ops.random.random_ops import random_normal
from tensorflux._src.ops.shape_fns import static_value
from tensorflux._src.ops.state import init_ops
from tensorflux._src.train import variable_scope as vs

__all__ = ["AttentionMechanism", "AttentionWrapper", "AttentionWrapperState", "LuongAttention",
           "BahdanauAttention", "hardmax", "safe_cumprod", "monotonic_attention",
           "BahdanauMonotonicAttention", "LuongMonotonicAttention"]


def _zero_state_tensors(state_size, batch_size, dtype):
    """Zeros `[batch_size] + s` per size `s` (TF's _zero_state_tensors: a size may be a
    scalar tensor, the memory's time dimension when it is only known at run time)."""
    def zeros_for(size):
        if not isinstance(size, Tensor):
            return _zeros(batch_size, size, dtype)
        batch = convert_to_tensor(batch_size, dtype=_dtypes.int32)
        out = zeros(array_ops.stack([batch, size]), dtype=dtype)
        known = static_value(batch)
        out.set_shape([None if known is None else int(known), None])
        return out
    return map_state_size(zeros_for, state_size)


def _dim(tensor, i):
    """Dimension i of tensor: its static value, else a tensor."""
    value = tensor.shape[i].value if tensor.shape.ndims is not None else None
    return value if value is not None else array_ops.shape(tensor)[i]


class AttentionMechanism:
    """Base class of attention mechanisms (what `AttentionWrapper` accepts)."""

    @property
    def alignments_size(self):
        raise NotImplementedError

    @property
    def state_size(self):
        raise NotImplementedError


def _prepare_memory(memory, memory_sequence_length, check_inner_dims_defined):
    """The memory as tensors, rows past each sequence's length zeroed."""
    memory = nest.map_structure(lambda m: convert_to_tensor(m, name="memory"), memory)
    if memory_sequence_length is not None:
        memory_sequence_length = convert_to_tensor(memory_sequence_length,
                                                   name="memory_sequence_length")
    if check_inner_dims_defined:
        def check_dims(m):
            if not m.shape[2:].is_fully_defined():
                raise ValueError(f"Expected memory {m.name} to have fully defined inner dims, "
                                 f"but saw shape: {m.shape}")
        nest.map_structure(check_dims, memory)
    if memory_sequence_length is None:
        return memory
    first = nest.flatten(memory)[0]
    seq_len_mask = sequence_mask(memory_sequence_length, maxlen=array_ops.shape(first)[1],
                                 dtype=first.dtype)

    def maybe_mask(m):
        rank = m.shape.ndims if m.shape.ndims is not None else array_ops.rank(m)
        extra_ones = ones(rank - 2, dtype=_dtypes.int32)
        mask = array_ops.reshape(seq_len_mask, array_ops.concat(
            (array_ops.shape(seq_len_mask), extra_ones), 0))
        return m * mask

    return nest.map_structure(maybe_mask, memory)


def _maybe_mask_score(score, memory_sequence_length, score_mask_value):
    if memory_sequence_length is None:
        return score
    message = "All values in memory_sequence_length must be greater than zero."
    with _graph.control_dependencies([check_ops.assert_positive(memory_sequence_length,
                                                                message=message)]):
        score_mask = sequence_mask(memory_sequence_length, maxlen=array_ops.shape(score)[1])
        return where(score_mask, score, score_mask_value * ones_like(score))


class _BaseAttentionMechanism(AttentionMechanism):
    """Stores the query and memory layers and the processed memory (keys, values)."""

    def __init__(self, query_layer, memory, probability_fn, memory_sequence_length=None,
                 memory_layer=None, check_inner_dims_defined=True, score_mask_value=None,
                 custom_key_value_fn=None, name=None):
        if query_layer is not None and not isinstance(query_layer, Layer):
            raise TypeError(f"query_layer is not a Layer: {type(query_layer).__name__}")
        if memory_layer is not None and not isinstance(memory_layer, Layer):
            raise TypeError(f"memory_layer is not a Layer: {type(memory_layer).__name__}")
        self._query_layer = query_layer
        self._memory_layer = memory_layer
        self.dtype = memory_layer.dtype
        if not callable(probability_fn):
            raise TypeError(f"probability_fn must be callable, saw type: "
                            f"{type(probability_fn).__name__}")
        if score_mask_value is None:
            score_mask_value = _dtypes.as_dtype(self.dtype).as_numpy_dtype(-np.inf)
        self._probability_fn = lambda score, prev: probability_fn(
            _maybe_mask_score(score, memory_sequence_length, score_mask_value), prev)
        with _graph.name_scope(name, "BaseAttentionMechanismInit", nest.flatten(memory)):
            self._values = _prepare_memory(memory, memory_sequence_length,
                                           check_inner_dims_defined)
            self._keys = self.memory_layer(self._values) if self.memory_layer \
                else self._values
            if custom_key_value_fn is not None:
                self._keys, self._values = custom_key_value_fn(self._keys, self._values)
            self._batch_size = _dim(self._keys, 0)
            self._alignments_size = _dim(self._keys, 1)

    @property
    def memory_layer(self):
        return self._memory_layer

    @property
    def query_layer(self):
        return self._query_layer

    @property
    def values(self):
        return self._values

    @property
    def keys(self):
        return self._keys

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def alignments_size(self):
        return self._alignments_size

    @property
    def state_size(self):
        return self._alignments_size

    def initial_alignments(self, batch_size, dtype):
        """All-zero alignments `[batch_size, alignments_size]`."""
        return _zero_state_tensors(self._alignments_size, batch_size, dtype)

    def initial_state(self, batch_size, dtype):
        return self.initial_alignments(batch_size, dtype)

    def __call__(self, query, state):
        """Returns `(alignments, next_state)` for `query` [batch, query_depth]."""
        # Each mechanism's variables live in its own scope, TF's names for checkpoints.
        with vs.variable_scope(None, self._scope_name, [query]):
            score = self._score(query)
        alignments = self._probability_fn(score, state)
        return alignments, alignments


def _luong_score(query, keys, scale):
    depth, key_units = query.shape[-1], keys.shape[-1]
    if depth != key_units:
        raise ValueError(
            f"Incompatible or unknown inner dimensions between query and keys.  Query "
            f"({query}) has units: {depth}.  Keys ({keys}) have units: {key_units}.  Perhaps "
            f"you need to set num_units to the keys' dimension ({key_units})?")
    score = array_ops.squeeze(matmul(array_ops.expand_dims(query, 1), keys,
                                     transpose_b=True), [1])
    return score if scale is None else scale * score


def _scaled_luong_score(query, keys, scale):
    """The Luong score, times a learned scalar `attention_g` when `scale`."""
    attention_g = None
    if scale:
        attention_g = vs.get_variable("attention_g", dtype=query.dtype,
                                      initializer=init_ops.ones_initializer, shape=())
    return _luong_score(query, keys, attention_g)


class LuongAttention(_BaseAttentionMechanism):
    """Luong-style (multiplicative) attention; `scale=True` learns a scalar on the score."""

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False,
                 probability_fn=None, score_mask_value=None, dtype=None,
                 custom_key_value_fn=None, name="LuongAttention"):
        probability_fn = softmax if probability_fn is None else probability_fn
        dtype = _dtypes.float32 if dtype is None else dtype
        super().__init__(
            query_layer=None,
            memory_layer=Dense(num_units, name="memory_layer", use_bias=False, dtype=dtype),
            memory=memory, probability_fn=lambda score, _: probability_fn(score),
            memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value,
            custom_key_value_fn=custom_key_value_fn, name=name)
        self._num_units = num_units
        self._scale = scale
        self._name = name

    _scope_name = "luong_attention"

    def _score(self, query):
        return _scaled_luong_score(query, self._keys, self._scale)


def _bahdanau_score(processed_query, keys, attention_v, attention_g=None, attention_b=None):
    processed_query = array_ops.expand_dims(processed_query, 1)
    if attention_g is not None and attention_b is not None:
        normed_v = attention_g * attention_v * math_ops.rsqrt(
            reduce_sum(math_ops.square(attention_v)))
        return reduce_sum(normed_v * math_ops.tanh(keys + processed_query + attention_b), [2])
    return reduce_sum(attention_v * math_ops.tanh(keys + processed_query), [2])


def _bahdanau_energy(mechanism, query):
    """The Bahdanau score of `query` against `mechanism`'s keys, with its variables
    (`attention_v`, and `attention_g`/`attention_b` when it normalizes)."""
    num_units = mechanism._num_units
    processed_query = mechanism.query_layer(query) if mechanism.query_layer else query
    attention_v = vs.get_variable("attention_v", [num_units], dtype=query.dtype)
    attention_g = attention_b = None
    if mechanism._normalize:
        attention_g = vs.get_variable(
            "attention_g", dtype=query.dtype, shape=(),
            initializer=init_ops.constant_initializer(math.sqrt(1. / num_units)))
        attention_b = vs.get_variable("attention_b", [num_units], dtype=query.dtype,
                                      initializer=init_ops.zeros_initializer())
    return _bahdanau_score(processed_query, mechanism._keys, attention_v,
                           attention_g=attention_g, attention_b=attention_b)


class BahdanauAttention(_BaseAttentionMechanism):
    """Bahdanau-style (additive) attention; `normalize=True` is its weight-normalized
    form."""

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False,
                 probability_fn=None, score_mask_value=None, dtype=None,
                 custom_key_value_fn=None, name="BahdanauAttention"):
        probability_fn = softmax if probability_fn is None else probability_fn
        dtype = _dtypes.float32 if dtype is None else dtype
        super().__init__(
            query_layer=Dense(num_units, name="query_layer", use_bias=False, dtype=dtype),
            memory_layer=Dense(num_units, name="memory_layer", use_bias=False, dtype=dtype),
            memory=memory, probability_fn=lambda score, _: probability_fn(score),
            custom_key_value_fn=custom_key_value_fn,
            memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value,
            name=name)
        self._num_units = num_units
        self._normalize = normalize
        self._name = name

    _scope_name = "bahdanau_attention"

    def _score(self, query):
        return _bahdanau_energy(self, query)


def safe_cumprod(x, *args, **kwargs):
    """cumprod of a positive `x` as exp(cumsum(log(x))) (no underflow); args as cumprod's."""
    with _graph.name_scope(None, "SafeCumprod", [x]):
        x = convert_to_tensor(x, name="x")
        tiny = np.finfo(x.dtype.as_numpy_dtype).tiny
        return math_ops.exp(cumsum(math_ops.log(clip_by_value(x, tiny, 1)), *args, **kwargs))


def monotonic_attention(p_choose_i, previous_attention, mode):
    """The monotonic attention distribution from choosing probabilities (modes
    'recursive', 'parallel' and 'hard', as TF1's)."""
    p_choose_i = convert_to_tensor(p_choose_i, name="p_choose_i")
    previous_attention = convert_to_tensor(previous_attention, name="previous_attention")
    if mode == "recursive":
        batch_size = _dim(p_choose_i, 0)
        shifted = array_ops.concat([ones((batch_size, 1)), 1 - p_choose_i[:, :-1]], 1)
        q = scan(lambda x, yz: array_ops.reshape(yz[0] * x + yz[1], (batch_size,)),
                 [array_ops.transpose(shifted), array_ops.transpose(previous_attention)],
                 zeros((batch_size,)))
        return p_choose_i * array_ops.transpose(q)
    if mode == "parallel":
        cumprod_1mp = safe_cumprod(1 - p_choose_i, axis=1, exclusive=True)
        return p_choose_i * cumprod_1mp * cumsum(
            previous_attention / clip_by_value(cumprod_1mp, 1e-10, 1.), axis=1)
    if mode == "hard":
        p_choose_i *= cumsum(previous_attention, axis=1)
        return p_choose_i * cumprod(1 - p_choose_i, axis=1, exclusive=True)
    raise ValueError("mode must be 'recursive', 'parallel', or 'hard'.")


def _monotonic_probability_fn(score, previous_alignments, sigmoid_noise, mode, seed=None):
    """Choosing probabilities sigmoid(score + noise) (a hard step in mode 'hard'), turned
    into the monotonic attention distribution."""
    if sigmoid_noise > 0:
        score += sigmoid_noise * random_normal(array_ops.shape(score), dtype=score.dtype,
                                               seed=seed)
    if mode == "hard":
        p_choose_i = math_ops.cast(score > 0, score.dtype)
    else:
        p_choose_i = math_ops.sigmoid(score)
    return monotonic_attention(p_choose_i, previous_alignments, mode)


class _BaseMonotonicAttentionMechanism(_BaseAttentionMechanism):
    """Monotonic mechanisms start from a dirac distribution on the first memory entry."""

    def initial_alignments(self, batch_size, dtype):
        """`[batch_size, alignments_size]` one-hot rows at position 0."""
        return one_hot(zeros((batch_size,), dtype=_dtypes.int32), self._alignments_size,
                       dtype=dtype)


def _with_score_bias(score, score_bias_init):
    """`score` plus the monotonic mechanisms' learned scalar `attention_score_bias`."""
    return score + vs.get_variable("attention_score_bias", dtype=score.dtype,
                                   initializer=score_bias_init)


def _monotonic_fn(sigmoid_noise, mode, seed):
    return lambda score, previous: _monotonic_probability_fn(score, previous, sigmoid_noise,
                                                             mode, seed)


class BahdanauMonotonicAttention(_BaseMonotonicAttentionMechanism):
    """Bahdanau energies through the monotonic probability function, with a learned
    scalar score bias before the sigmoid (Raffel et al., 2017)."""

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False,
                 score_mask_value=None, sigmoid_noise=0., sigmoid_noise_seed=None,
                 score_bias_init=0., mode="parallel", dtype=None,
                 name="BahdanauMonotonicAttention"):
        dtype = _dtypes.float32 if dtype is None else dtype
        super().__init__(
            query_layer=Dense(num_units, name="query_layer", use_bias=False, dtype=dtype),
            memory_layer=Dense(num_units, name="memory_layer", use_bias=False, dtype=dtype),
            memory=memory, probability_fn=_monotonic_fn(sigmoid_noise, mode,
                                                        sigmoid_noise_seed),
            memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value,
            name=name)
        self._num_units = num_units
        self._normalize = normalize
        self._name = name
        self._score_bias_init = score_bias_init

    _scope_name = "bahdanau_monotonic_attention"

    def _score(self, query):
        return _with_score_bias(_bahdanau_energy(self, query), self._score_bias_init)


class LuongMonotonicAttention(_BaseMonotonicAttentionMechanism):
    """Luong energies through the monotonic probability function, with a learned scalar
    score bias before the sigmoid (Raffel et al., 2017)."""

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False,
                 score_mask_value=None, sigmoid_noise=0., sigmoid_noise_seed=None,
                 score_bias_init=0., mode="parallel", dtype=None,
                 name="LuongMonotonicAttention"):
        dtype = _dtypes.float32 if dtype is None else dtype
        super().__init__(
            query_layer=None,
            memory_layer=Dense(num_units, name="memory_layer", use_bias=False, dtype=dtype),
            memory=memory, probability_fn=_monotonic_fn(sigmoid_noise, mode,
                                                        sigmoid_noise_seed),
            memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value,
            name=name)
        self._num_units = num_units
        self._scale = scale
        self._score_bias_init = score_bias_init
        self._name = name

    _scope_name = "luong_monotonic_attention"

    def _score(self, query):
        return _with_score_bias(_scaled_luong_score(query, self._keys, self._scale),
                                self._score_bias_init)


def hardmax(logits, name=None):
    """One-hot vectors at the largest logit of each row."""
    with _graph.name_scope(name, "Hardmax", [logits]):
        logits = convert_to_tensor(logits, name="logits")
        depth = _dim(logits, -1) if logits.shape.ndims else array_ops.shape(logits)[-1]
        return one_hot(argmax(logits, -1), depth, dtype=logits.dtype)


class AttentionWrapperState(collections.namedtuple(
        "AttentionWrapperState", ("cell_state", "attention", "time", "alignments",
                                  "alignment_history", "attention_state"))):
    """The state of an `AttentionWrapper` (`alignment_history` holds TensorArrays)."""

    def clone(self, **kwargs):
        """This state with the given fields replaced; replacements keep the static
        shapes of the fields they replace (a mismatch is a ValueError)."""
        def with_same_shape(old, new):
            if isinstance(old, Tensor) and isinstance(new, Tensor):
                if not old.shape.is_compatible_with(new.shape):
                    raise ValueError(f"The shape of the AttentionWrapperState is expected to "
                                     f"be same as the one to clone. self.shape: {old.shape}, "
                                     f"input.shape: {new.shape}")
                new.set_shape(old.shape)
            return new
        return nest.map_structure(with_same_shape, self, self._replace(**kwargs))


def _compute_attention(attention_mechanism, cell_output, attention_state, attention_layer):
    alignments, next_attention_state = attention_mechanism(cell_output, state=attention_state)
    context = array_ops.squeeze(matmul(array_ops.expand_dims(alignments, 1),
                                       attention_mechanism.values), [1])
    attention = attention_layer(array_ops.concat([cell_output, context], 1)) \
        if attention_layer is not None else context
    return attention, alignments, next_attention_state


class AttentionWrapper(RNNCell):
    """Wraps another `RNNCell` with attention over an encoder's memory."""

    def __init__(self, cell, attention_mechanism, attention_layer_size=None,
                 alignment_history=False, cell_input_fn=None, output_attention=True,
                 initial_cell_state=None, name=None, attention_layer=None, attention_fn=None,
                 dtype=None):
        super().__init__(name=name, dtype=dtype)
        _check_cell("cell", cell)
        if isinstance(attention_mechanism, (list, tuple)):
            self._is_multi = True
            mechanisms = tuple(attention_mechanism)
            for m in mechanisms:
                if not isinstance(m, AttentionMechanism):
                    raise TypeError(f"attention_mechanism must contain only instances of "
                                    f"AttentionMechanism, saw type: {type(m).__name__}")
        else:
            self._is_multi = False
            if not isinstance(attention_mechanism, AttentionMechanism):
                raise TypeError(f"attention_mechanism must be an AttentionMechanism or list "
                                f"of multiple AttentionMechanism instances, saw type: "
                                f"{type(attention_mechanism).__name__}")
            mechanisms = (attention_mechanism,)
        if cell_input_fn is None:
            cell_input_fn = lambda inputs, attention: array_ops.concat([inputs, attention], -1)
        elif not callable(cell_input_fn):
            raise TypeError(f"cell_input_fn must be callable, saw type: "
                            f"{type(cell_input_fn).__name__}")
        if attention_layer_size is not None and attention_layer is not None:
            raise ValueError("Only one of attention_layer_size and attention_layer should be "
                             "set")
        if attention_layer_size is not None:
            sizes = tuple(attention_layer_size if isinstance(attention_layer_size,
                                                             (list, tuple))
                          else (attention_layer_size,))
            if len(sizes) != len(mechanisms):
                raise ValueError(f"If provided, attention_layer_size must contain exactly one "
                                 f"integer per attention_mechanism, saw: {len(sizes)} vs "
                                 f"{len(mechanisms)}")
            self._attention_layers = tuple(
                Dense(size, name="attention_layer", use_bias=False, dtype=mechanisms[i].dtype)
                for i, size in enumerate(sizes))
            self._attention_layer_size = sum(sizes)
        elif attention_layer is not None:
            self._attention_layers = tuple(attention_layer if isinstance(
                attention_layer, (list, tuple)) else (attention_layer,))
            if len(self._attention_layers) != len(mechanisms):
                raise ValueError(f"If provided, attention_layer must contain exactly one "
                                 f"layer per attention_mechanism, saw: "
                                 f"{len(self._attention_layers)} vs {len(mechanisms)}")
            self._attention_layer_size = sum(
                layer.compute_output_shape(tensor_shape.TensorShape(
                    [None, cell.output_size + m.values.shape[-1].value]))[-1].value
                for layer, m in zip(self._attention_layers, mechanisms))
        else:
            self._attention_layers = None
            self._attention_layer_size = sum(m.values.shape[-1].value for m in mechanisms)
        self._attention_fn = attention_fn if attention_fn is not None else _compute_attention
        self._cell = cell
        self._attention_mechanisms = mechanisms
        self._cell_input_fn = cell_input_fn
        self._output_attention = output_attention
        self._alignment_history = alignment_history
        with _graph.name_scope(name, "AttentionWrapperInit"):
            if initial_cell_state is None:
                self._initial_cell_state = None
            else:
                final = nest.flatten(initial_cell_state)[-1]
                message = (f"When constructing AttentionWrapper {self._base_name}: "
                           f"Non-matching batch sizes between the memory (encoder output) and "
                           f"initial_cell_state.  Are you using the BeamSearchDecoder?  You "
                           f"may need to tile your initial state via the "
                           f"tf.contrib.seq2seq.tile_batch function with argument "
                           f"multiple=beam_width.")
                with _graph.control_dependencies(self._batch_size_checks(_dim(final, 0),
                                                                         message)):
                    self._initial_cell_state = nest.map_structure(
                        lambda s: array_ops.identity(s, name="check_initial_cell_state"),
                        initial_cell_state)

    def _batch_size_checks(self, batch_size, error_message):
        return [check_ops.assert_equal(batch_size, m.batch_size, message=error_message)
                for m in self._attention_mechanisms]

    def _item_or_tuple(self, seq):
        t = tuple(seq)
        return t if self._is_multi else t[0]

    @property
    def output_size(self):
        return self._attention_layer_size if self._output_attention \
            else self._cell.output_size

    @property
    def state_size(self):
        return AttentionWrapperState(
            cell_state=self._cell.state_size, time=tensor_shape.TensorShape([]),
            attention=self._attention_layer_size,
            alignments=self._item_or_tuple(m.alignments_size
                                           for m in self._attention_mechanisms),
            attention_state=self._item_or_tuple(m.state_size
                                                for m in self._attention_mechanisms),
            alignment_history=self._item_or_tuple(
                m.alignments_size if self._alignment_history else ()
                for m in self._attention_mechanisms))

    def zero_state(self, batch_size, dtype):
        """The initial state (zeros, the cell's initial state, empty alignment histories);
        with a BeamSearchDecoder, batch_size is the true batch size times beam_width."""
        with _graph.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            if self._initial_cell_state is not None:
                cell_state = self._initial_cell_state
            else:
                cell_state = self._cell.get_initial_state(batch_size=batch_size, dtype=dtype)
            message = (f"When calling zero_state of AttentionWrapper {self._base_name}: "
                       f"Non-matching batch sizes between the memory (encoder output) and the "
                       f"requested batch size.  Are you using the BeamSearchDecoder?  If so, "
                       f"make sure your encoder output has been tiled to beam_width via "
                       f"tf.contrib.seq2seq.tile_batch, and the batch_size= argument passed "
                       f"to zero_state is batch_size * beam_width.")
            with _graph.control_dependencies(self._batch_size_checks(batch_size, message)):
                cell_state = nest.map_structure(
                    lambda s: array_ops.identity(s, name="checked_cell_state"), cell_state)
            initial_alignments = [m.initial_alignments(batch_size, dtype)
                                  for m in self._attention_mechanisms]
            return AttentionWrapperState(
                cell_state=cell_state, time=zeros([], dtype=_dtypes.int32),
                attention=_zero_state_tensors(self._attention_layer_size, batch_size, dtype),
                alignments=self._item_or_tuple(initial_alignments),
                attention_state=self._item_or_tuple(m.initial_state(batch_size, dtype)
                                                    for m in self._attention_mechanisms),
                alignment_history=self._item_or_tuple(
                    TensorArray(dtype, size=0, dynamic_size=True,
                                element_shape=alignment.shape)
                    if self._alignment_history else () for alignment in initial_alignments))

    def call(self, inputs, state):
        """One step: the cell on (inputs, previous attention), then attention over the
        memory with its output."""
        if not isinstance(state, AttentionWrapperState):
            raise TypeError(f"Expected state to be instance of AttentionWrapperState. Received "
                            f"type {type(state)} instead.")
        cell_inputs = self._cell_input_fn(inputs, state.attention)
        cell_output, next_cell_state = self._cell(cell_inputs, state.cell_state)
        message = (f"When applying AttentionWrapper {self.name}: Non-matching batch sizes "
                   f"between the memory (encoder output) and the query (decoder output).  Are "
                   f"you using the BeamSearchDecoder?  You may need to tile your memory input "
                   f"via the tf.contrib.seq2seq.tile_batch function with argument "
                   f"multiple=beam_width.")
        with _graph.control_dependencies(self._batch_size_checks(_dim(cell_output, 0),
                                                                 message)):
            cell_output = array_ops.identity(cell_output, name="checked_cell_output")
        if self._is_multi:
            previous_states, previous_histories = state.attention_state, \
                state.alignment_history
        else:
            previous_states, previous_histories = [state.attention_state], \
                [state.alignment_history]
        alignments_all, attentions, attention_states, histories = [], [], [], []
        for i, mechanism in enumerate(self._attention_mechanisms):
            attention, alignments, next_attention_state = self._attention_fn(
                mechanism, cell_output, previous_states[i],
                self._attention_layers[i] if self._attention_layers else None)
            history = previous_histories[i].write(state.time, alignments) \
                if self._alignment_history else ()
            attention_states.append(next_attention_state)
            alignments_all.append(alignments)
            attentions.append(attention)
            histories.append(history)
        attention = array_ops.concat(attentions, 1)
        next_state = AttentionWrapperState(
            time=state.time + 1, cell_state=next_cell_state, attention=attention,
            attention_state=self._item_or_tuple(attention_states),
            alignments=self._item_or_tuple(alignments_all),
            alignment_history=self._item_or_tuple(histories))
        return (attention if self._output_attention else cell_output), next_state
