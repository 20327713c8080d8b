"""`tf.random`: TF1.15's random namespace (same ops as the top-level random_* names)."""

from tensorflux._src.ops.random_ops import (  # noqa: F401
    categorical, multinomial, random_crop, random_gamma, random_normal, random_poisson,
    random_shuffle, random_uniform, set_random_seed, truncated_normal,
)

normal = random_normal
uniform = random_uniform
gamma = random_gamma
poisson = random_poisson
shuffle = random_shuffle
set_seed = set_random_seed
