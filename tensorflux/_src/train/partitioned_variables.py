"""Partitioners (`tf.fixed_size_partitioner`, ...) and `tf.create_partitioned_variables`.

A partitioner is called as `partitioner(shape=TensorShape, dtype=DType)` and returns how
many shards to cut each axis into (TF1 allows one axis > 1). `tf.get_variable(...,
partitioner=p)` (variable_scope.py) then creates the parts `name/part_<i>`, the first
`size % shards` of them one row longer, each with the SaveSliceInfo Saver uses.
"""

from __future__ import annotations

import logging
import math

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import tensor_shape
from tensorflux._src.train import variable_scope as vs

__all__ = ["create_partitioned_variables", "variable_axis_size_partitioner",
           "min_max_variable_partitioner", "fixed_size_partitioner"]

_log = logging.getLogger("tensorflux")


def _element_size(dtype, bytes_per_string_element):
    if dtype.base_dtype == _dtypes.string:
        return bytes_per_string_element
    return dtype.size


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16,
                                   max_shards=None):
    """Shards along `axis` so that each shard stays below `max_shard_bytes` (at least one
    slice per shard; at most `max_shards` shards)."""
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError("Both max_shard_bytes and bytes_per_string_element must be positive.")
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape, dtype):
        if not isinstance(shape, tensor_shape.TensorShape):
            raise ValueError(f"shape is not a TensorShape: {shape}")
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        if not isinstance(dtype, _dtypes.DType):
            raise ValueError(f"dtype is not a DType: {dtype}")
        partitions = [1] * shape.ndims
        axis_size = shape[axis].value
        bytes_per_slice = 1.0 * (shape.num_elements() / axis_size) \
            * _element_size(dtype, bytes_per_string_element)
        slices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_slice))
        axis_shards = int(math.ceil(1.0 * axis_size / slices_per_shard))
        if max_shards:
            axis_shards = min(max_shards, axis_shards)
        partitions[axis] = axis_shards
        return partitions

    return _partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10,
                                 bytes_per_string_element=16):
    """At most `max_partitions` shards along `axis`, each at least `min_slice_size` bytes."""

    def _partitioner(shape, dtype):
        if axis >= len(shape):
            raise ValueError(f"Can not partition variable along axis {axis} when shape is "
                             f"only {shape}")
        total_bytes = shape.num_elements() * _element_size(dtype, bytes_per_string_element)
        partitions = total_bytes / min_slice_size
        partitions_list = [1] * len(shape)
        partitions_list[axis] = max(1, min(shape[axis].value, max_partitions,
                                           int(math.ceil(partitions))))
        return partitions_list

    return _partitioner


def fixed_size_partitioner(num_shards, axis=0):
    """`num_shards` shards along `axis` (fewer if the axis is shorter)."""

    def _partitioner(shape, **unused_args):
        partitions_list = [1] * len(shape)
        partitions_list[axis] = min(num_shards, shape[axis].value)
        return partitions_list

    return _partitioner


def create_partitioned_variables(shape, slicing, initializer, dtype=_dtypes.float32,
                                 trainable=True, collections=None, name=None, reuse=None):
    """The parts (a list of Variables) of a variable of `shape` cut as `slicing` says;
    deprecated in TF1 for `get_variable(..., partitioner=...)`, which it calls."""
    _log.warning("create_partitioned_variables is deprecated.  Use tf.get_variable with a "
                 "partitioner set, or tf.get_partitioned_variable_list, instead.")
    if len(shape) != len(slicing):
        raise ValueError(f"The 'shape' and 'slicing' of a partitioned Variable must have the "
                         f"length: shape: {shape}, slicing: {slicing}")
    if len(shape) < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1: shape: {shape}")
    partitioner = lambda **unused: list(slicing)  # noqa: E731 - the slicing, as given
    with vs.variable_scope(name, "PartitionedVariable", reuse=reuse) as scope:
        store = vs._store()
        variable = store.get_partitioned(
            scope.name, partitioner, shape, _dtypes.as_dtype(dtype), initializer, None,
            scope.reuse, trainable, collections, True, None, None)
        return list(variable)
