"""Lookup tables built from datasets: `tf.data.experimental.table_from_dataset`,
`index_table_from_dataset` and their `DatasetInitializer`.

The init op is the host record InitializeTableFromDataset (TF's name). TF's takes the
dataset as a variant tensor; here, like MakeIterator, it takes the dataset's graph
tensors and names the dataset by token, and its kernel runs one pass of the dataset,
filling the table with the (key, value) elements as KeyValueTensorInitializer would.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.data import iterator_ops
from tensorflux._src.data.dataset_ops import INPUT_TYPES, Dataset
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.ops.lookup import lookup_ops, table_kernels
from tensorflux._src.ops.lookup.initializers import TableInitializerBase, check_table_dtypes
from tensorflux._src.ops.lookup.static_tables import (
    FastHashSpec, IdTableWithHashBuckets, StaticHashTable,
)
from tensorflux._src.ops.math.math_ops import cast
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import REQUIRED, OpDef, register

__all__ = ["DatasetInitializer", "table_from_dataset", "index_table_from_dataset"]

_BASE_ERROR = ("Datasets used to initialize lookup tables must produce elements in the form "
               "(key, value), where the keys and values are scalar tensors. ")


def _elements(count):
    return f"{count} element{'' if count == 1 else 's'}"


def _initialize_from_dataset(table_handle, vocab_size, *inputs, dataset):
    table = lookup_ops.initializable_table(table_handle)
    limit = int(vocab_size)
    state = iterator_ops._IteratorState(iterator_ops._DATASETS[dataset], inputs)
    keys, values = [], []
    try:
        while limit < 0 or len(keys) < limit:
            element = state.next()
            if element is None:
                break
            keys.append(np.asarray(element[0]).item())
            values.append(np.asarray(element[1]).item())
    finally:
        state.close()
    if 0 <= limit != len(keys):  # TF applies assert_cardinality(vocab_size)
        raise errors.FailedPreconditionError(
            None, None, f"Input dataset was expected to contain {_elements(limit)} but "
                        f"contained only {_elements(len(keys))}.")
    table.initialize_from_tensors(table_kernels._array(keys, table.key_dtype, (len(keys),)),
                                  table_kernels._array(values, table.value_dtype,
                                                       (len(values),)))
    return ()


register(OpDef(
    "InitializeTableFromDataset",
    inputs=("table_handle: resource", "vocab_size: int64", "inputs: list(Tin)"), outputs=(),
    attrs={"Tin": INPUT_TYPES, "dataset": REQUIRED},
    shape=lambda op: [], host=_initialize_from_dataset, stateful=True,
    not_differentiable=True))


def _check_element_spec(dataset):
    template, specs = dataset._structure.template, dataset._structure.specs
    described = dataset._structure.describe()
    if not (isinstance(template, tuple) and len(template) == 2 and len(specs) == 2):
        count = len(template) if isinstance(template, tuple) else 1
        raise ValueError(_BASE_ERROR + f"However, the given dataset produces {count} "
                         f"components instead of two (key, value) components. Full dataset "
                         f"element spec: {described}.")
    for spec, part in zip(specs, ("key", "value")):
        if spec.shape.ndims not in (None, 0):
            raise ValueError(_BASE_ERROR + f"However, the given dataset produces elements "
                             f"where the {part} component has a non-scalar shape "
                             f"{spec.shape}. Full dataset element spec: {described}.")


class DatasetInitializer(TableInitializerBase):
    """Fills a table with the (key, value) elements of a dataset."""

    def __init__(self, dataset):
        if not isinstance(dataset, Dataset):
            raise TypeError(f"dataset must be a tf.data.Dataset, got {type(dataset).__name__}")
        _check_element_spec(dataset)
        self.dataset = dataset
        self._vocab_size = -1
        key_spec, value_spec = dataset._structure.specs
        super().__init__(key_spec.dtype, value_spec.dtype)

    def initialize(self, table):
        """The InitializeTableFromDataset op filling `table`."""
        check_table_dtypes(table, self._key_dtype, self._value_dtype)
        token = iterator_ops._register_dataset(self.dataset)
        vocab_size = self._vocab_size
        if not isinstance(vocab_size, Tensor):
            vocab_size = np.int64(vocab_size)
        init_op = apply_op("InitializeTableFromDataset", table_handle=table.resource_handle,
                           vocab_size=vocab_size, inputs=list(self.dataset._inputs()),
                           dataset=token)
        _graph.add_to_collection(GraphKeys.TABLE_INITIALIZERS, init_op)
        return init_op


def table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None, default_value=None,
                       hasher_spec=FastHashSpec, key_dtype=_dtypes.string, name=None):
    """A lookup table from the (key, value) elements of `dataset`; keys not in it give
    `default_value` (-1 for numeric values), or one of `num_oov_buckets` hash buckets.
    With `vocab_size`, only that many elements are used and the dataset must have them."""
    _check_element_spec(dataset)
    value_dtype = dataset._structure.specs[1].dtype
    if default_value is None:
        default_value = -1
        if not (value_dtype.is_integer or value_dtype.is_floating):
            raise ValueError(f"`default_value` must be specified when creating a table from a "
                             f"dataset that produces values of type {value_dtype}.")
    if num_oov_buckets < 0:
        raise ValueError(f"`num_oov_buckets` must be greater than or equal to 0, got "
                         f"{num_oov_buckets}.")
    if not isinstance(vocab_size, Tensor) and vocab_size is not None and vocab_size < 1:
        raise ValueError(f"`vocab_size` must be greater than 0, got {vocab_size}.")
    key_dtype = _dtypes.as_dtype(key_dtype)
    if not key_dtype.is_integer and key_dtype.base_dtype != _dtypes.string:
        raise TypeError(f"`key_dtype` must be either an integer or string type, but got "
                        f"{key_dtype}")
    with _graph.name_scope(name, "string_to_index"):
        initializer = DatasetInitializer(dataset)
        if vocab_size is not None:
            if isinstance(vocab_size, Tensor):
                vocab_size = cast(vocab_size, _dtypes.int64)
            initializer._vocab_size = vocab_size
        with _graph.name_scope(None, "hash_table"):
            table = StaticHashTable(initializer, default_value)
        if num_oov_buckets:
            table = IdTableWithHashBuckets(table, num_oov_buckets=num_oov_buckets,
                                           hasher_spec=hasher_spec, key_dtype=key_dtype)
        return table


def index_table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None,
                             default_value=-1, hasher_spec=FastHashSpec,
                             key_dtype=_dtypes.string, name=None):
    """A table from the elements of `dataset` to their positions (int64); other keys give
    `default_value`, or one of `num_oov_buckets` hash buckets."""
    positions = Dataset.range(np.iinfo(np.int64).max)
    return table_from_dataset(Dataset.zip((dataset, positions)), num_oov_buckets, vocab_size,
                              default_value, hasher_spec, key_dtype, name)
