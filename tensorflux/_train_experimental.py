"""`tf.train.experimental`: TF 1.15's loss scaling for mixed precision and the
object-checkpoint helper `PythonState`."""

from tensorflux._src.train.loss_scale import (  # noqa: F401
    DynamicLossScale, FixedLossScale, LossScale, MixedPrecisionLossScaleOptimizer,
    disable_mixed_precision_graph_rewrite, enable_mixed_precision_graph_rewrite,
)
from tensorflux._src.train.tracking import PythonState  # noqa: F401,E402

# Checkpoint sharding: ShardingCallback, ShardableTensor and TF 2.15's two policies.
from tensorflux._src.train.sharding import (  # noqa: F401,E402
    MaxShardSizePolicy, ShardableTensor, ShardByTaskPolicy, ShardingCallback,
)
