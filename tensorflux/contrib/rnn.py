"""`tf.contrib.rnn`: the RNN cells and static drivers under their contrib names."""

from tensorflux._src.ops.nn.rnn import (  # noqa: F401
    static_bidirectional_rnn, static_rnn, static_state_saving_rnn,
)
from tensorflux._src.ops.nn.rnn_cell_impl import (  # noqa: F401
    BasicLSTMCell, BasicRNNCell, DeviceWrapper, DropoutWrapper, GRUCell, LSTMCell,
    LSTMStateTuple, MultiRNNCell, ResidualWrapper, RNNCell,
)
