"""`tf.nn`: activations, convolutions, pooling, normalization, losses' building blocks."""

from tensorflux._src.ops.nn.conv_ops import *  # noqa: F401,F403
from tensorflux._src.ops.math.math_ops import sigmoid, tanh  # noqa: F401
from tensorflux._src.ops.nn.nn_ops import *  # noqa: F401,F403
from tensorflux._src.ops.nn.nn_embedding_ops import *  # noqa: F401,F403
from tensorflux._src.ops.nn.nn_loss_ops import *  # noqa: F401,F403
from tensorflux._src.ops.nn.nn_norm_ops import *  # noqa: F401,F403
from tensorflux._src.ops.nn.nn_sampling_ops import *  # noqa: F401,F403
from tensorflux._src.ops.nn.pool_ops import *  # noqa: F401,F403
from tensorflux._src.ops.array.sort_ops import top_k  # noqa: F401
from tensorflux._src.ops.nn.rnn import *  # noqa: F401,F403
from tensorflux import _nn_rnn_cell as rnn_cell  # noqa: F401,E402

# Neural-network extras: CTC, fractional and generic pooling, morphology.
from tensorflux._src.ops.math.approx_topk import approx_max_k, approx_min_k  # noqa: F401,E402
from tensorflux._src.ops.nn.ctc import *  # noqa: F401,F403,E402
from tensorflux._src.ops.nn.ctc_decoders import *  # noqa: F401,F403,E402
from tensorflux._src.ops.nn.fractional_pool import *  # noqa: F401,F403,E402
from tensorflux._src.ops.nn.morphology import *  # noqa: F401,F403,E402
from tensorflux._src.ops.nn.pooling_nd import *  # noqa: F401,F403,E402
from tensorflux._src.ops.nn.replica_losses import *  # noqa: F401,F403,E402
from tensorflux import _nn_experimental as experimental  # noqa: F401,E402

# Space, depth and batch moves (the array family).
from tensorflux._src.ops.array.moves import (  # noqa: F401,E402
    depth_to_space, space_to_batch, space_to_depth, with_space_to_batch,
)

# Candidate samplers (shared with tf.random).
from tensorflux._src.ops.nn.candidate_samplers import (  # noqa: F401,E402
    all_candidate_sampler, fixed_unigram_candidate_sampler, learned_unigram_candidate_sampler,
)

# Sparse embedding lookups.
from tensorflux._src.ops.sparse.embedding_ops import (  # noqa: F401,E402
    embedding_lookup_sparse, safe_embedding_lookup_sparse,
)

# TensorArray-based recurrent loops (raw_rnn).
from tensorflux._src.ops.nn.raw_rnn import raw_rnn  # noqa: F401,E402
