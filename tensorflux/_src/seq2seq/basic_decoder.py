"""`BasicDecoder`: an RNN cell, an optional output layer and a `Helper` that samples."""

from __future__ import annotations

import collections

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import nest
from tensorflux._src.framework import tensor_shape
from tensorflux._src.layers.base import Layer
from tensorflux._src.ops.nn.rnn import _check_cell
from tensorflux._src.seq2seq import helper as helper_py
from tensorflux._src.seq2seq.decoder import Decoder

__all__ = ["BasicDecoderOutput", "BasicDecoder"]


class BasicDecoderOutput(collections.namedtuple("BasicDecoderOutput",
                                                ("rnn_output", "sample_id"))):
    pass


def rnn_output_size(cell, output_layer):
    """The cell's output size, or that of `output_layer` applied to it."""
    size = cell.output_size
    if output_layer is None:
        return size
    with_batch = nest.map_structure(lambda s: tensor_shape.TensorShape([None]).concatenate(s),
                                    size)
    layer_shape = output_layer.compute_output_shape(with_batch)
    return nest.map_structure(lambda s: s[1:], layer_shape)


class BasicDecoder(Decoder):
    """Basic sampling decoder."""

    def __init__(self, cell, helper, initial_state, output_layer=None):
        _check_cell("cell", cell)
        if not isinstance(helper, helper_py.Helper):
            raise TypeError(f"helper must be a Helper, received: {type(helper)}")
        if output_layer is not None and not isinstance(output_layer, Layer):
            raise TypeError(f"output_layer must be a Layer, received: {type(output_layer)}")
        self._cell = cell
        self._helper = helper
        self._initial_state = initial_state
        self._output_layer = output_layer

    @property
    def batch_size(self):
        return self._helper.batch_size

    def _rnn_output_size(self):
        return rnn_output_size(self._cell, self._output_layer)

    @property
    def output_size(self):
        return BasicDecoderOutput(rnn_output=self._rnn_output_size(),
                                  sample_id=self._helper.sample_ids_shape)

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_state)[0].dtype
        return BasicDecoderOutput(nest.map_structure(lambda _: dtype, self._rnn_output_size()),
                                  self._helper.sample_ids_dtype)

    def initialize(self, name=None):
        """Returns `(finished, first_inputs, initial_state)`."""
        return tuple(self._helper.initialize()) + (self._initial_state,)

    def step(self, time, inputs, state, name=None):
        """Returns `(outputs, next_state, next_inputs, finished)`."""
        with _graph.name_scope(name, "BasicDecoderStep", (time, inputs, state)):
            cell_outputs, cell_state = self._cell(inputs, state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            sample_ids = self._helper.sample(time=time, outputs=cell_outputs,
                                             state=cell_state)
            finished, next_inputs, next_state = self._helper.next_inputs(
                time=time, outputs=cell_outputs, state=cell_state, sample_ids=sample_ids)
        outputs = BasicDecoderOutput(cell_outputs, sample_ids)
        return outputs, next_state, next_inputs, finished
