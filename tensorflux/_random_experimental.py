"""`tf.random.experimental`: Generator and the stateless seed utilities."""

from tensorflux._src.ops.random.stateful_random_ops import (  # noqa: F401
    Generator, create_rng_state, get_global_generator, set_global_generator,
)
from tensorflux._src.ops.random.stateless_kernels import Algorithm  # noqa: F401
from tensorflux._src.ops.random.stateless_random_ops import (  # noqa: F401
    fold_in as stateless_fold_in, split as stateless_split,
)
from tensorflux._src.ops.random.stateless_random_v2 import (  # noqa: F401
    index_shuffle, stateless_shuffle,
)
