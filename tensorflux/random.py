"""`tf.random`: TF1's random namespace (the top-level random_* ops under short names),
stateless ops keyed by a seed tensor, `Generator`, and the candidate samplers."""

from tensorflux._src.framework.random_seed import get_seed  # noqa: F401
from tensorflux._src.ops.nn.candidate_samplers import (  # noqa: F401
    all_candidate_sampler, fixed_unigram_candidate_sampler, learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler, uniform_candidate_sampler,
)
from tensorflux._src.ops.random.random_ops import (  # noqa: F401
    categorical, multinomial, random_crop, random_gamma, random_normal, random_poisson,
    random_shuffle, random_uniform, set_random_seed, truncated_normal,
)
from tensorflux._src.ops.random.stateful_random_ops import (  # noqa: F401
    Generator, create_rng_state, get_global_generator, set_global_generator,
)
from tensorflux._src.ops.random.stateless_random_ops import (  # noqa: F401
    Algorithm, stateless_categorical, stateless_multinomial,
    stateless_parameterized_truncated_normal, stateless_truncated_normal,
)
from tensorflux._src.ops.random.stateless_random_ops import (  # noqa: F401
    stateless_random_binomial as stateless_binomial,
    stateless_random_gamma as stateless_gamma,
    stateless_random_normal as stateless_normal,
    stateless_random_poisson as stateless_poisson,
    stateless_random_uniform as stateless_uniform,
)
from tensorflux._src.ops.random.stateless_random_ops import fold_in, split  # noqa: F401
from tensorflux import _random_experimental as experimental  # noqa: F401,E402

normal = random_normal
uniform = random_uniform
gamma = random_gamma
poisson = random_poisson
shuffle = random_shuffle
set_seed = set_random_seed
