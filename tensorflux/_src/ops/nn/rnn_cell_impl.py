"""`tf.nn.rnn_cell`: TF1's RNN cells (LSTM, GRU, basic RNN, stacks and wrappers).

A cell is a legacy `Layer` (layers/base.py) called as `cell(inputs, state)`, returning
`(output, new_state)`. Its weights are made in `build` with `tf.get_variable` under the
layer's scope, so names are TF1's: `rnn/basic_lstm_cell/kernel:0`,
`rnn/multi_rnn_cell/cell_0/gru_cell/gates/kernel:0`, ... Cells are compositions of
registry ops; they add no op records. When a cell is first called inside a loop body
(dynamic_rnn), its variables are still created outside the loop (variables.py leaves
control-flow bodies, as TF1's init_scope does), and the loop captures their values.

Gate layout follows TF1 exactly (it decides checkpoint compatibility): LSTM kernels are
`[input_depth + h_depth, 4 * units]` with columns (i, j, f, o) = (input gate, new
input, forget gate, output gate); GRU's `gates/kernel` columns are (r, u).
"""

from __future__ import annotations

import collections
import hashlib
import numbers

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.layers.base import InputSpec, Layer
from tensorflux._src.ops.array import array_ops, generator_ops, slicing_ops
from tensorflux._src.ops.control.control_flow_ops import flatten, pack
from tensorflux._src.ops.linalg import linalg_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.nn import nn_ops
from tensorflux._src.ops.shape_fns import static_value
from tensorflux._src.ops.state import init_ops
from tensorflux._src.train import variable_scope as vs

__all__ = [
    "RNNCell", "LayerRNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell",
    "LSTMStateTuple", "MultiRNNCell", "DropoutWrapper", "ResidualWrapper", "DeviceWrapper",
]

_ACTIVATIONS = {"tanh": math_ops.tanh, "sigmoid": math_ops.sigmoid, "relu": nn_ops.relu,
                "linear": lambda x: x}


def _activation(activation):
    if not activation:
        return math_ops.tanh
    if isinstance(activation, str):
        if activation not in _ACTIVATIONS:
            raise ValueError(f"Unknown activation function: {activation}")
        return _ACTIVATIONS[activation]
    return activation


def _check_supported_dtypes(dtype):
    if dtype is None:
        return
    dtype = _dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_complex):
        raise ValueError(f"RNN cell only supports floating point inputs, but saw dtype: "
                         f"{dtype.name}")


def _check_input_dtypes(structure):
    for t in flatten(structure)[0]:
        _check_supported_dtypes(t.dtype)


def _is_sequence(x):
    return isinstance(x, (list, tuple)) and not isinstance(x, tensor_shape.TensorShape)


def map_state_size(fn, state_size):
    """fn(size) for every leaf of a state size (ints or TensorShapes), same nesting."""
    if _is_sequence(state_size):
        mapped = [map_state_size(fn, s) for s in state_size]
        return type(state_size)(*mapped) if hasattr(state_size, "_fields") \
            else type(state_size)(mapped)
    return fn(state_size)


def _zeros(batch_size, size, dtype):
    """Zeros of shape [batch_size] + size, with the static batch size when it is known."""
    suffix = tensor_shape.as_shape(size)
    if not suffix.is_fully_defined():
        raise ValueError(f"state size must be fully defined, got {size}")
    if isinstance(batch_size, (Tensor,)) or hasattr(batch_size, "_as_graph_element"):
        batch = convert_to_tensor(batch_size)
        static = static_value(batch)
        shape = array_ops.concat([array_ops.reshape(batch, [1]),
                                  convert_to_tensor(suffix.as_list(), _dtypes.int32)], 0)
        zeros = generator_ops.zeros(shape, dtype=dtype)
        zeros.set_shape(tensor_shape.TensorShape(
            [int(static) if static is not None else None]).concatenate(suffix))
        return zeros
    return generator_ops.zeros([int(batch_size)] + suffix.as_list(), dtype=dtype)


# -- the base classes ------------------------------------------------------------------------

class RNNCell(Layer):
    """Abstract RNN cell: `(output, next_state) = cell(inputs, state)`.

    Subclasses give `state_size`, `output_size` and `call(inputs, state)`.
    """

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        super().__init__(trainable=trainable, name=name, dtype=dtype, **kwargs)
        self._is_tf_rnn_cell = True

    def __call__(self, inputs, state, scope=None):
        if scope is not None:
            with vs.variable_scope(scope) as captured:
                return super().__call__(inputs, state, scope=captured)
        return super().__call__(inputs, state)

    @property
    def state_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self):
        raise NotImplementedError("Abstract method")

    def build(self, _):
        pass  # cells that make weights in `call` (with get_variable) need no build

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        if inputs is not None:
            inputs = convert_to_tensor(inputs, name="inputs")
            batch_size = inputs.shape[0].value or array_ops.shape(inputs)[0]
            dtype = inputs.dtype
        if batch_size is None or dtype is None:
            raise ValueError(f"batch_size and dtype cannot be None while constructing initial "
                             f"state: batch_size={batch_size}, dtype={dtype}")
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size, dtype):
        """Zeros shaped `[batch_size] + s` for each `s` in `state_size` (same nesting)."""
        with _graph.name_scope(type(self).__name__ + "ZeroState"):
            return map_state_size(lambda s: _zeros(batch_size, s, dtype), self.state_size)


class LayerRNNCell(RNNCell):
    """A cell whose weights are made once in `build` (TF1's LayerRNNCell)."""


# -- basic RNN, GRU ----------------------------------------------------------------------------

class BasicRNNCell(LayerRNNCell):
    """output = new_state = activation(W [inputs, state] + b)."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None,
                 **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        _check_supported_dtypes(self.dtype)
        self.input_spec = InputSpec(ndim=2)
        self._num_units = num_units
        self._activation = _activation(activation)

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        self._kernel = self.add_weight("kernel", [depth + self._num_units, self._num_units])
        self._bias = self.add_weight("bias", [self._num_units],
                                     initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        _check_input_dtypes([inputs, state])
        pre = nn_ops.bias_add(linalg_ops.matmul(array_ops.concat([inputs, state], 1),
                                              self._kernel), self._bias)
        output = self._activation(pre)
        return output, output


class GRUCell(LayerRNNCell):
    """Gated recurrent unit: r, u = sigmoid(W_g [x, h] + b_g) (b_g starts at 1);
    c = act(W_c [x, r * h] + b_c); h' = u * h + (1 - u) * c."""

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        _check_supported_dtypes(self.dtype)
        self.input_spec = InputSpec(ndim=2)
        self._num_units = num_units
        self._activation = _activation(activation)
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth, units = _input_depth(inputs_shape), self._num_units
        self._gate_kernel = self.add_weight("gates/kernel", [depth + units, 2 * units],
                                            initializer=self._kernel_initializer)
        self._gate_bias = self.add_weight(
            "gates/bias", [2 * units], initializer=self._bias_initializer
            if self._bias_initializer is not None else init_ops.constant_initializer(1.0))
        self._candidate_kernel = self.add_weight("candidate/kernel", [depth + units, units],
                                                 initializer=self._kernel_initializer)
        self._candidate_bias = self.add_weight(
            "candidate/bias", [units], initializer=self._bias_initializer
            if self._bias_initializer is not None else init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        _check_input_dtypes([inputs, state])
        gates = math_ops.sigmoid(nn_ops.bias_add(linalg_ops.matmul(
            array_ops.concat([inputs, state], 1), self._gate_kernel), self._gate_bias))
        r, u = slicing_ops.split(gates, 2, axis=1)
        candidate = nn_ops.bias_add(linalg_ops.matmul(
            array_ops.concat([inputs, r * state], 1), self._candidate_kernel),
            self._candidate_bias)
        c = self._activation(candidate)
        new_h = u * state + (1 - u) * c
        return new_h, new_h


# -- LSTMs --------------------------------------------------------------------------------------

class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """An LSTM's state `(c, h)`: the memory cell and the output."""
    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent internal state: {c.dtype} vs {h.dtype}")
        return c.dtype


def _input_depth(inputs_shape):
    shape = tensor_shape.as_shape(inputs_shape)
    if shape.ndims is None or shape[-1].value is None:
        raise ValueError(f"Expected inputs.shape[-1] to be known, saw shape: {shape}")
    return shape[-1].value


class BasicLSTMCell(LayerRNNCell):
    """LSTM without peepholes, clipping or projection; `forget_bias` is added to f."""

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None,
                 reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        _check_supported_dtypes(self.dtype)
        self.input_spec = InputSpec(ndim=2)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)

    @property
    def state_size(self):
        return (LSTMStateTuple(self._num_units, self._num_units) if self._state_is_tuple
                else 2 * self._num_units)

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        self._kernel = self.add_weight("kernel", [depth + self._num_units, 4 * self._num_units])
        self._bias = self.add_weight("bias", [4 * self._num_units],
                                     initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        _check_input_dtypes([inputs, state])
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = slicing_ops.split(state, 2, axis=1)
        gates = nn_ops.bias_add(linalg_ops.matmul(array_ops.concat([inputs, h], 1),
                                                self._kernel), self._bias)
        i, j, f, o = slicing_ops.split(gates, 4, axis=1)
        forget_bias = convert_to_tensor(self._forget_bias, dtype=f.dtype.base_dtype)
        sigmoid = math_ops.sigmoid
        new_c = math_ops.add(math_ops.multiply(c, sigmoid(math_ops.add(f, forget_bias))),
                             math_ops.multiply(sigmoid(i), self._activation(j)))
        new_h = math_ops.multiply(self._activation(new_c), sigmoid(o))
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple \
            else array_ops.concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(LayerRNNCell):
    """LSTM with optional peepholes (`w_f_diag`, `w_i_diag`, `w_o_diag`), cell clipping and
    an output projection (`projection/kernel`, optionally clipped)."""

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_proj=None, proj_clip=None, num_unit_shards=None, num_proj_shards=None,
                 forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        _check_supported_dtypes(self.dtype)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise NotImplementedError("num_unit_shards/num_proj_shards (partitioned weights) "
                                      "are not supported")
        self.input_spec = InputSpec(ndim=2)
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)
        h = num_proj if num_proj else num_units
        self._state_size = LSTMStateTuple(num_units, h) if state_is_tuple else num_units + h
        self._output_size = h

    @property
    def state_size(self):
        return self._state_size

    @property
    def output_size(self):
        return self._output_size

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        units = self._num_units
        h_depth = units if self._num_proj is None else self._num_proj
        self._kernel = self.add_weight("kernel", [depth + h_depth, 4 * units],
                                       initializer=self._initializer)
        self._bias = self.add_weight("bias", [4 * units],
                                     initializer=init_ops.zeros_initializer())
        if self._use_peepholes:
            self._w_f_diag = self.add_weight("w_f_diag", [units], initializer=self._initializer)
            self._w_i_diag = self.add_weight("w_i_diag", [units], initializer=self._initializer)
            self._w_o_diag = self.add_weight("w_o_diag", [units], initializer=self._initializer)
        if self._num_proj is not None:
            self._proj_kernel = self.add_weight("projection/kernel", [units, self._num_proj],
                                                initializer=self._initializer)
        self.built = True

    def call(self, inputs, state):
        _check_input_dtypes([inputs, state])
        units = self._num_units
        proj = units if self._num_proj is None else self._num_proj
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = slicing_ops.slice(state, [0, 0], [-1, units])
            m_prev = slicing_ops.slice(state, [0, units], [-1, proj])
        sigmoid = math_ops.sigmoid
        gates = nn_ops.bias_add(linalg_ops.matmul(array_ops.concat([inputs, m_prev], 1),
                                                self._kernel), self._bias)
        i, j, f, o = slicing_ops.split(gates, 4, axis=1)
        if self._use_peepholes:
            c = (sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev
                 + sigmoid(i + self._w_i_diag * c_prev) * self._activation(j))
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = math_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = sigmoid(o + self._w_o_diag * c) * self._activation(c)
        else:
            m = sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = linalg_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = math_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple \
            else array_ops.concat([c, m], 1)
        return m, new_state


# -- stacks and wrappers ---------------------------------------------------------------------

class MultiRNNCell(RNNCell):
    """Cells applied in order; cell i runs in variable scope `cell_i`."""

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not isinstance(cells, (list, tuple)):
            raise TypeError(f"cells must be a list or tuple, but saw: {cells}.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(_is_sequence(c.state_size) for c in self._cells):
            raise ValueError(f"Some cells return tuples of states, but the flag state_is_tuple "
                             f"is not set.  State sizes are: "
                             f"{[c.state_size for c in self._cells]}")

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(cell.state_size for cell in self._cells)
        return sum(cell.state_size for cell in self._cells)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    def zero_state(self, batch_size, dtype):
        with _graph.name_scope(type(self).__name__ + "ZeroState"):
            if self._state_is_tuple:
                return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
            return super().zero_state(batch_size, dtype)

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        return [w for cell in self._cells for w in cell.trainable_weights]

    @property
    def non_trainable_weights(self):
        weights = [w for cell in self._cells for w in cell.non_trainable_weights]
        if not self.trainable:
            return [w for cell in self._cells for w in cell.trainable_weights] + weights
        return weights

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    variables = weights
    trainable_variables = trainable_weights

    def call(self, inputs, state):
        position, current, new_states = 0, inputs, []
        for i, cell in enumerate(self._cells):
            with vs.variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    if not _is_sequence(state):
                        raise ValueError(f"Expected state to be a tuple of length "
                                         f"{len(self.state_size)}, but received: {state}")
                    cell_state = state[i]
                else:
                    cell_state = slicing_ops.slice(state, [0, position], [-1, cell.state_size])
                    position += cell.state_size
                current, new_state = cell(current, cell_state)
                new_states.append(new_state)
        return current, (tuple(new_states) if self._state_is_tuple
                         else array_ops.concat(new_states, 1))


class _Wrapper(RNNCell):
    """A cell around another cell: same sizes; calls it directly (no scope of its own)."""

    def __init__(self, cell):
        super().__init__()
        for attr in ("output_size", "state_size", "zero_state"):
            if not hasattr(cell, attr):
                raise TypeError(f"The argument 'cell' ({cell}) is not an RNNCell: '{attr}' "
                                f"is missing.")
        self._cell = cell

    @property
    def wrapped_cell(self):
        return self._cell

    @property
    def state_size(self):
        return self._cell.state_size

    @property
    def output_size(self):
        return self._cell.output_size

    @property
    def trainable_weights(self):
        return self._cell.trainable_weights

    @property
    def non_trainable_weights(self):
        return self._cell.non_trainable_weights

    @property
    def weights(self):
        return self._cell.weights

    variables = weights
    trainable_variables = trainable_weights

    def zero_state(self, batch_size, dtype):
        with _graph.name_scope(type(self).__name__ + "ZeroState"):
            return self._cell.zero_state(batch_size, dtype)


def _keep_dropout_of_memory(substate):
    """TF1's default state filter: never drop the memory `c` of an LSTM state."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


class DropoutWrapper(_Wrapper):
    """Dropout on the cell's inputs, outputs and (except LSTM's c) new state; a keep
    probability that is the constant 1 adds no op."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None):
        super().__init__(cell)
        if variational_recurrent:
            raise NotImplementedError("DropoutWrapper(variational_recurrent=True) is not "
                                      "supported")
        if dropout_state_filter_visitor is not None and not callable(
                dropout_state_filter_visitor):
            raise TypeError("dropout_state_filter_visitor must be callable")
        self._state_filter = dropout_state_filter_visitor or _keep_dropout_of_memory
        self._seed = seed
        with _graph.name_scope("DropoutWrapperInit"):
            for prob, attr in ((input_keep_prob, "input_keep_prob"),
                               (state_keep_prob, "state_keep_prob"),
                               (output_keep_prob, "output_keep_prob")):
                if isinstance(prob, numbers.Real):
                    constant = float(prob)
                else:
                    prob = convert_to_tensor(prob)
                    value = static_value(prob)
                    constant = float(value) if value is not None else None
                if constant is not None:
                    if not 0 <= constant <= 1:
                        raise ValueError(f"Parameter {attr} must be between 0 and 1: "
                                         f"{constant}")
                    setattr(self, "_" + attr, constant)
                else:
                    setattr(self, "_" + attr, prob)

    def _gen_seed(self, prefix, index):
        if self._seed is None:
            return None
        text = (str(self._seed) + f"{prefix}_{index}").encode("utf-8")
        return int(hashlib.md5(text).hexdigest()[:8], 16) & 0x7FFFFFFF

    def _dropout(self, values, prefix, keep_prob, keep_mask=True):
        leaves, treedef = flatten(values)
        masks = flatten(keep_mask)[0] if keep_mask is not True else [True] * len(leaves)
        out = [nn_ops.dropout(v, keep_prob=keep_prob, seed=self._gen_seed(prefix, i))
               if do else v for i, (v, do) in enumerate(zip(leaves, masks))]
        return pack(treedef, out)

    @staticmethod
    def _active(prob):
        return not isinstance(prob, float) or prob < 1

    def __call__(self, inputs, state, scope=None):
        if self._active(self._input_keep_prob):
            inputs = self._dropout(inputs, "input", self._input_keep_prob)
        output, new_state = self._cell(inputs, state, scope=scope)
        if self._active(self._state_keep_prob):
            new_state = self._dropout(new_state, "state", self._state_keep_prob,
                                      _state_mask(self._state_filter, new_state))
        if self._active(self._output_keep_prob):
            output = self._dropout(output, "output", self._output_keep_prob)
        return output, new_state


def _state_mask(visitor, state):
    """Per leaf of `state`, whether dropout applies (the visitor may answer per level)."""
    answer = visitor(state)
    if isinstance(answer, bool):
        return pack(flatten(state)[1], [answer] * len(flatten(state)[0]))
    if _is_sequence(state) and _is_sequence(answer):
        parts = [_state_mask(visitor, s) if a is True else
                 pack(flatten(s)[1], [False] * len(flatten(s)[0])) if a is False else a
                 for s, a in zip(state, answer)]
        return type(state)(*parts) if hasattr(state, "_fields") else type(state)(parts)
    return pack(flatten(state)[1], [bool(answer)] * len(flatten(state)[0]))


class ResidualWrapper(_Wrapper):
    """Adds the cell's inputs to its outputs (or applies `residual_fn(inputs, outputs)`)."""

    def __init__(self, cell, residual_fn=None):
        super().__init__(cell)
        self._residual_fn = residual_fn

    def __call__(self, inputs, state, scope=None):
        outputs, new_state = self._cell(inputs, state, scope=scope)
        if self._residual_fn is not None:
            return self._residual_fn(inputs, outputs), new_state
        in_leaves, in_def = flatten(inputs)
        out_leaves, out_def = flatten(outputs)
        if in_def != out_def:
            raise ValueError(f"inputs and outputs of the wrapped cell differ in structure: "
                             f"{in_def} vs {out_def}")
        for i, o in zip(in_leaves, out_leaves):
            i.shape.assert_is_compatible_with(o.shape)
        return pack(out_def, [i + o for i, o in zip(in_leaves, out_leaves)]), new_state


class DeviceWrapper(_Wrapper):
    """Runs the cell under `tf.device(device)`."""

    def __init__(self, cell, device):
        super().__init__(cell)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with _graph.device(self._device):
            return super().zero_state(batch_size, dtype)

    def __call__(self, inputs, state, scope=None):
        with _graph.device(self._device):
            return self._cell(inputs, state, scope=scope)
