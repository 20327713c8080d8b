"""`tf.sets`: set size, intersection, union and difference over the last dimension."""

from tensorflux._src.ops.array.set_ops import (  # noqa: F401
    set_difference, set_intersection, set_size, set_union,
)

difference = set_difference
intersection = set_intersection
size = set_size
union = set_union
