"""`tf.initializers`: TF1's initializer classes under short names, and the ops that
initialize variables and tables (the same objects as their top-level names)."""

from tensorflux._src.ops.state.init_ops import (  # noqa: F401
    Constant as constant, GlorotNormal as glorot_normal, GlorotUniform as glorot_uniform,
    Identity as identity, Ones as ones, Orthogonal as orthogonal,
    RandomNormal as random_normal, RandomUniform as random_uniform,
    TruncatedNormal as truncated_normal, UniformUnitScaling as uniform_unit_scaling,
    VarianceScaling as variance_scaling, Zeros as zeros, he_normal, he_uniform, lecun_normal,
    lecun_uniform,
)
from tensorflux._src.ops.state.table_init import tables_initializer  # noqa: F401
from tensorflux._src.train.variables import (  # noqa: F401
    global_variables_initializer as global_variables,
    local_variables_initializer as local_variables, variables_initializer as variables,
)
