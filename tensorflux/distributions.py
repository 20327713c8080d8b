"""`tf.distributions`: TF 1.15's (deprecated) probability distributions, built from
graph ops: log_prob, cdf, moments, entropy, KL divergences and (reparameterized where
TF's are) samples."""

from tensorflux._src.distributions.bernoulli import Bernoulli  # noqa: F401
from tensorflux._src.distributions.beta import Beta  # noqa: F401
from tensorflux._src.distributions.categorical import Categorical  # noqa: F401
from tensorflux._src.distributions.dirichlet import (  # noqa: F401
    Dirichlet, DirichletMultinomial,
)
from tensorflux._src.distributions.distribution import (  # noqa: F401
    FULLY_REPARAMETERIZED, NOT_REPARAMETERIZED, Distribution, ReparameterizationType,
)
from tensorflux._src.distributions.gamma import Exponential, Gamma  # noqa: F401
from tensorflux._src.distributions.kullback_leibler import (  # noqa: F401
    RegisterKL, kl_divergence,
)
from tensorflux._src.distributions.multinomial import Multinomial  # noqa: F401
from tensorflux._src.distributions.normal import Normal  # noqa: F401
from tensorflux._src.distributions.student_t import StudentT  # noqa: F401
from tensorflux._src.distributions.laplace import Laplace  # noqa: F401
from tensorflux._src.distributions.uniform import Uniform  # noqa: F401
