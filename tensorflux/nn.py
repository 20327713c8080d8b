"""`tf.nn`: activations, convolutions, pooling, normalization, losses' building blocks."""

from tensorflux._src.ops.conv_ops import *  # noqa: F401,F403
from tensorflux._src.ops.math_ops import sigmoid, tanh  # noqa: F401
from tensorflux._src.ops.nn_ops import *  # noqa: F401,F403
from tensorflux._src.ops.pool_ops import *  # noqa: F401,F403
from tensorflux._src.ops.sort_ops import top_k  # noqa: F401
from tensorflux._src.ops.rnn import *  # noqa: F401,F403
from tensorflux import _nn_rnn_cell as rnn_cell  # noqa: F401,E402

# Neural-network extras: CTC, fractional and generic pooling, morphology.

# Space, depth and batch moves (the array family).

# Candidate samplers (shared with tf.random).
from tensorflux._src.ops.candidate_samplers import (  # noqa: F401,E402
    all_candidate_sampler, fixed_unigram_candidate_sampler, learned_unigram_candidate_sampler,
)
