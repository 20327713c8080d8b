"""`tf.nn.rnn_cell`: TF1's RNN cells and wrappers (see _src/ops/nn/rnn_cell_impl.py)."""

from tensorflux._src.ops.nn.rnn_cell_impl import (  # noqa: F401
    BasicLSTMCell, BasicRNNCell, DeviceWrapper, DropoutWrapper, GRUCell, LSTMCell,
    LSTMStateTuple, MultiRNNCell, ResidualWrapper, RNNCell,
)
