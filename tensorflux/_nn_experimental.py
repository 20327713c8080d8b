"""`tf.nn.experimental`: dropout with a given uniform sampler or a stateless seed."""

from tensorflux._src.ops.nn.dropout_variants import (  # noqa: F401
    general_dropout, stateless_dropout,
)
