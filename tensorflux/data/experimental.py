"""`tf.data.experimental`: the parts TF1 input pipelines commonly use."""

from tensorflux._src.data.dataset_ops import AUTOTUNE


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """shuffle then repeat, reshuffling every pass (one transformation in TF)."""
    return lambda dataset: dataset.shuffle(buffer_size, seed).repeat(count)


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    """map then batch (fused in TF; the same elements here)."""
    parallel = num_parallel_calls or num_parallel_batches
    return lambda dataset: dataset.map(map_func, parallel).batch(batch_size, drop_remainder)


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None):
    """interleave in TF's deterministic order (sloppy=True allows no reordering here)."""
    return lambda dataset: dataset.interleave(map_func, cycle_length, block_length)


def unbatch():
    return lambda dataset: dataset.unbatch()


__all__ = ["AUTOTUNE", "shuffle_and_repeat", "map_and_batch", "parallel_interleave",
           "unbatch"]

# Input pipelines: the rest of tf.data.experimental.

# Lookup tables built from datasets.
from tensorflux._src.data.table_init import (  # noqa: E402
    index_table_from_dataset, table_from_dataset,
)
__all__ += ["index_table_from_dataset", "table_from_dataset"]
