"""`tf.manip`: TF1's namespace for a few array ops; the same functions as the top-level
names (tf.manip.roll is tf.roll)."""

from tensorflux._src.ops.array.layout import roll  # noqa: F401
from tensorflux._src.ops.array.moves import batch_to_space_nd, space_to_batch_nd  # noqa: F401
from tensorflux._src.ops.array.array_ops import reshape, reverse, tile  # noqa: F401
from tensorflux._src.ops.array.gather_ops import gather_nd, scatter_nd  # noqa: F401

__all__ = ["batch_to_space_nd", "gather_nd", "reshape", "reverse", "roll", "scatter_nd",
           "space_to_batch_nd", "tile"]
