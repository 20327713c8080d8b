"""`tf.data`: input pipelines (TF1's Dataset and Iterator API)."""

from tensorflux._src.data.dataset_ops import AUTOTUNE, Dataset  # noqa: F401
from tensorflux._src.data.dataset_ops import INFINITE as INFINITE_CARDINALITY  # noqa: F401
from tensorflux._src.data.dataset_ops import UNKNOWN as UNKNOWN_CARDINALITY  # noqa: F401
from tensorflux._src.data.iterator_ops import Iterator, NumpyIterator  # noqa: F401
from tensorflux._src.data.options import Options, ThreadingOptions  # noqa: F401
from tensorflux._src.data.readers import (  # noqa: F401
    FixedLengthRecordDataset, TextLineDataset, TFRecordDataset,
)
from tensorflux._src.data.type_specs import DatasetSpec  # noqa: F401
from tensorflux.data import experimental  # noqa: F401


def make_one_shot_iterator(dataset):
    """`tf.compat.v1.data.make_one_shot_iterator(dataset)`."""
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset, shared_name=None):
    """`tf.compat.v1.data.make_initializable_iterator(dataset)`."""
    return dataset.make_initializable_iterator(shared_name)


def get_output_types(dataset_or_iterator):
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator):
    return dataset_or_iterator.output_classes
