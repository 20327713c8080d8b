"""tf.data.experimental's functions: most are transformations for `Dataset.apply`
over the nodes of the other modules, with TF's signatures."""

from __future__ import annotations

from tensorflux._src.data.dataset_ops import AUTOTUNE, Dataset
from tensorflux._src.data.element_ops import (AssertCardinalityDataset,
                                              PadToCardinalityDataset)
from tensorflux._src.data.iterator_ops import Iterator
from tensorflux._src.data.sources import CounterDataset, ListDataset
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.type_spec import TypeSpec as Structure  # noqa: F401


def Counter(start=0, step=1, dtype=_dtypes.int64):  # noqa: N802 - TF's exported name
    """start, start + step, start + 2 * step, ... (an infinite dataset)."""
    return CounterDataset(start, step, dtype)


def from_list(elements, name=None):
    """A dataset of the given elements (each a nested structure of values)."""
    return ListDataset(elements)


def get_structure(dataset_or_iterator):
    """The element_spec of a Dataset or Iterator."""
    if isinstance(dataset_or_iterator, (Dataset, Iterator)):
        return dataset_or_iterator.element_spec
    raise TypeError(f"`dataset_or_iterator` must be a `tf.data.Dataset` or tf.data.Iterator "
                    f"object, but got {type(dataset_or_iterator)}.")


def assert_cardinality(expected_cardinality):
    """Checks when iterated that the input has `expected_cardinality` elements."""
    return lambda dataset: AssertCardinalityDataset(dataset, expected_cardinality)


def pad_to_cardinality(cardinality, mask_key="valid"):
    return lambda dataset: PadToCardinalityDataset(dataset, cardinality, mask_key)


def enumerate_dataset(start=0):
    return lambda dataset: dataset.enumerate(start)


def scan(initial_state, scan_func):
    return lambda dataset: dataset.scan(initial_state, scan_func)


def take_while(predicate):
    return lambda dataset: dataset.take_while(predicate)


def unique():
    return lambda dataset: dataset.unique()


def ignore_errors(log_warning=False):
    return lambda dataset: dataset.ignore_errors(log_warning)


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    return lambda dataset: dataset.group_by_window(key_func, reduce_func, window_size,
                                                   window_size_func)


def bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes,
                              padded_shapes=None, padding_values=None,
                              pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    return lambda dataset: dataset.bucket_by_sequence_length(
        element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes,
        padding_values, pad_to_bucket_boundary, no_padding, drop_remainder)


def rejection_resample(class_func, target_dist, initial_dist=None, seed=None):
    return lambda dataset: dataset.rejection_resample(class_func, target_dist, initial_dist,
                                                      seed)


def snapshot(path, compression="AUTO", reader_func=None, shard_func=None, **legacy_options):
    """Also takes TF 1.15's tuning keywords (reader_path_prefix, shard_size_bytes...),
    which have no effect here."""
    return lambda dataset: dataset.snapshot(path, compression, reader_func, shard_func)


def dense_to_sparse_batch(batch_size, row_shape):
    return lambda dataset: dataset.sparse_batch(batch_size, row_shape)


def map_and_batch_with_legacy_function(map_func, batch_size, num_parallel_batches=None,
                                       drop_remainder=False, num_parallel_calls=None):
    parallel = num_parallel_calls or num_parallel_batches
    return lambda dataset: dataset.map(map_func, parallel).batch(batch_size, drop_remainder)


def prefetch_to_device(device, buffer_size=None):
    """prefetch: XLA places the computation, so there is no separate device copy."""
    return lambda dataset: dataset.prefetch(AUTOTUNE if buffer_size is None else buffer_size)


def copy_to_device(target_device, source_device="/cpu:0"):
    """The input unchanged: XLA moves the elements to where the computation runs."""
    return lambda dataset: dataset


def enable_debug_mode():
    """TF raises outside eager mode, and tensorflux is always in graph mode."""
    raise ValueError("`enable_debug_mode() is only supported in eager mode.")


def dense_to_ragged_batch(batch_size, drop_remainder=False, row_splits_dtype=_dtypes.int64):
    """`Dataset.ragged_batch` for `Dataset.apply`: batches elements of different shapes
    into RaggedTensors."""
    return lambda dataset: dataset.ragged_batch(batch_size, drop_remainder, row_splits_dtype)
