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
from tensorflux._src.data.experimental_ops import dense_to_ragged_batch  # noqa: E402,F401
from tensorflux._src.data.type_specs import RaggedTensorStructure  # noqa: E402,F401
__all__ += ["RaggedTensorStructure", "dense_to_ragged_batch"]
from tensorflux._src.data.consumers import (  # noqa: E402,F401
    TFRecordWriter, cardinality, get_single_element,
)
from tensorflux._src.data.dataset_ops import INFINITE as INFINITE_CARDINALITY  # noqa: E402
from tensorflux._src.data.dataset_ops import UNKNOWN as UNKNOWN_CARDINALITY  # noqa: E402
from tensorflux._src.data.experimental_ops import (  # noqa: E402,F401
    Counter, Structure, assert_cardinality, bucket_by_sequence_length, copy_to_device,
    dense_to_sparse_batch, enable_debug_mode, enumerate_dataset, from_list, get_structure,
    group_by_window, ignore_errors, map_and_batch_with_legacy_function, pad_to_cardinality,
    prefetch_to_device, rejection_resample, scan, snapshot, take_while, unique,
)
from tensorflux._src.data.experimental_readers import (  # noqa: E402,F401
    CsvDataset, SqlDataset, make_batched_features_dataset, make_csv_dataset,
    parse_example_dataset,
)
from tensorflux._src.data.grouping import Reducer, group_by_reducer  # noqa: E402,F401
from tensorflux._src.data.iterator_ops import get_next_as_optional  # noqa: E402,F401
from tensorflux._src.data.iterator_saving import make_saveable_from_iterator  # noqa: E402,F401
from tensorflux._src.data.optional_ops import Optional  # noqa: E402,F401
from tensorflux._src.data.options import (  # noqa: E402,F401
    AutoShardPolicy, AutotuneAlgorithm, AutotuneOptions, DistributeOptions,
    ExternalStatePolicy, OptimizationOptions, ServiceOptions, ThreadingOptions,
)
from tensorflux._src.data.selection import (  # noqa: E402,F401
    choose_from_datasets, sample_from_datasets,
)
from tensorflux._src.data.sources import RandomDataset  # noqa: E402,F401
from tensorflux._src.data.table_init import DatasetInitializer  # noqa: E402,F401
from tensorflux._src.data.transformations import SHARD_HINT  # noqa: E402,F401
from tensorflux._src.data.type_specs import (  # noqa: E402,F401
    DatasetSpec as DatasetStructure, OptionalSpec as OptionalStructure,
    SparseTensorStructure, TensorStructure,
)

__all__ += [  # noqa: PLE0605
    "AutoShardPolicy", "AutotuneAlgorithm", "AutotuneOptions", "Counter", "CsvDataset",
    "DatasetInitializer", "DatasetStructure", "DistributeOptions", "ExternalStatePolicy",
    "INFINITE_CARDINALITY", "OptimizationOptions", "Optional", "OptionalStructure",
    "RandomDataset", "Reducer", "SHARD_HINT", "ServiceOptions", "SparseTensorStructure",
    "SqlDataset", "Structure", "TFRecordWriter", "TensorStructure", "ThreadingOptions",
    "UNKNOWN_CARDINALITY", "assert_cardinality", "bucket_by_sequence_length", "cardinality",
    "choose_from_datasets", "copy_to_device", "dense_to_sparse_batch", "enable_debug_mode",
    "enumerate_dataset", "from_list", "get_next_as_optional", "get_single_element",
    "get_structure", "group_by_reducer", "group_by_window", "ignore_errors",
    "make_batched_features_dataset", "make_csv_dataset", "make_saveable_from_iterator",
    "map_and_batch_with_legacy_function", "pad_to_cardinality", "parse_example_dataset",
    "prefetch_to_device", "rejection_resample", "sample_from_datasets", "scan", "snapshot",
    "take_while", "unique",
]

# Lookup tables built from datasets.
from tensorflux._src.data.table_init import (  # noqa: E402
    index_table_from_dataset, table_from_dataset,
)
__all__ += ["index_table_from_dataset", "table_from_dataset"]

# TensorArray elements (TensorArraySpec).
from tensorflux._src.data.type_specs import TensorArrayStructure  # noqa: E402,F401
__all__ += ["TensorArrayStructure"]

# The tf.data service, datasets as variant tensors, distributed_save.
import sys as _sys  # noqa: E402

from tensorflux._src.data.service_ops import distributed_save  # noqa: E402,F401
from tensorflux._src.data.variant_ops import from_variant, to_variant  # noqa: E402,F401
from tensorflux.data import experimental_service as service  # noqa: E402

# `import tensorflux.data.experimental.service` works as TF's module path does.
_sys.modules.setdefault(__name__ + ".service", service)
__all__ += ["distributed_save", "from_variant", "service", "to_variant"]
