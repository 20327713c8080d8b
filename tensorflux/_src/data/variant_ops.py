"""`tf.data.experimental.to_variant` / `from_variant`: a dataset as a scalar variant tensor.

In TF a dataset *is* a variant tensor (the output of its dataset op). Here a dataset is
a description whose graph tensors are evaluated when an iterator starts, so
`to_variant` adds a host op, WrapDatasetVariant, taking those tensors: its value when
run is a `DatasetVariant` (the dataset and the values of its tensors, fixed at that
run). `from_variant(variant, structure)` is a dataset reading the variant tensor's value
when its own iterator starts, so the variant can come from anywhere the graph computes
it: a captured tensor inside a map/flat_map/interleave function, a fed placeholder of
dtype variant, another dataset's function.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.data import structure as _structure
from tensorflux._src.data.consumers import fingerprint_of
from tensorflux._src.data.dataset_ops import INPUT_TYPES, Dataset, IterationContext
from tensorflux._src.data.iterator_ops import _DATASETS, _register_dataset
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors, tensor_shape
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import REQUIRED, OpDef, register


class DatasetVariant:
    """The run-time value of a dataset's variant tensor: the dataset node and the values
    of its graph inputs. Each `iterate()` is a fresh pass."""

    __slots__ = ("dataset", "values")

    def __init__(self, dataset, values):
        self.dataset, self.values = dataset, list(values)

    def context(self):
        return IterationContext(dict(zip(self.dataset._inputs(), self.values)))

    def iterate(self):
        ctx = self.context()
        elements = self.dataset._iterate(ctx)
        try:
            yield from elements
        finally:
            elements.close()
            ctx.close()

    def __repr__(self):
        ctx = self.context()
        try:
            return f"<DatasetVariant {fingerprint_of(self.dataset, ctx):016x}>"
        finally:
            ctx.close()


def scalar_object(value):
    array = np.empty((), object)
    array[()] = value
    return array


def _wrap_kernel(*inputs, dataset):
    return scalar_object(DatasetVariant(_DATASETS[dataset], inputs))


register(OpDef("WrapDatasetVariant", inputs=("inputs: list(Tin)",),
               outputs=("output_handle: variant",),
               attrs={"Tin": INPUT_TYPES, "dataset": REQUIRED},
               shape=lambda op: tensor_shape.TensorShape([]), host=_wrap_kernel, stateful=True,
               not_differentiable=True))


def to_variant(dataset):
    """A scalar `tf.variant` tensor standing for `dataset` (its value, when run, holds
    the dataset and the values of the graph tensors it uses)."""
    if not isinstance(dataset, Dataset):
        raise TypeError(f"`dataset` must be a `tf.data.Dataset` object, got "
                        f"{type(dataset).__name__}")
    return apply_op("WrapDatasetVariant", name="WrapDatasetVariant",
                    inputs=dataset._inputs(), dataset=_register_dataset(dataset))


def dataset_of(value, where):
    """The DatasetVariant a variant tensor's value holds (InvalidArgumentError else)."""
    item = np.asarray(value, dtype=object)
    if item.shape != ():
        raise errors.InvalidArgumentError(
            None, None, f"{where}: the variant tensor must be a scalar, got shape "
            f"{list(item.shape)}")
    item = item.item()
    if not isinstance(item, DatasetVariant):
        raise errors.InvalidArgumentError(
            None, None, f"{where}: the variant tensor does not hold a dataset (got "
            f"{type(item).__name__}); make it with tf.data.experimental.to_variant")
    return item


class VariantDataset(Dataset):
    """`from_variant(variant, structure)`: the elements of the dataset the variant holds."""

    def __init__(self, variant, structure):
        if not isinstance(variant, Tensor) or variant.dtype.base_dtype != _dtypes.variant:
            raise TypeError(f"`variant` must be a scalar `tf.variant` tensor (as "
                            f"tf.data.experimental.to_variant makes), got {variant!r}")
        if not variant.shape.is_compatible_with([]):
            raise ValueError(f"`variant` must be a scalar, got shape {variant.shape}")
        self._variant = variant
        self._tensor_args = (variant,)
        self._spec = structure
        self._structure = _structure.Structure.from_element_spec(structure)

    def _source(self, ctx):
        source = dataset_of(ctx.value(self._variant), "from_variant")
        held = source.dataset._structure.element_spec
        if not _structure.specs_compatible(held, self._spec):
            raise errors.InvalidArgumentError(
                None, None, f"from_variant: the variant holds a dataset with element_spec "
                f"{held}, incompatible with the given structure {self._spec}")
        return source

    def _iterate(self, ctx):
        yield from self._source(ctx).iterate()

    def _cardinality(self, ctx):
        source = self._source(ctx)
        inner = source.context()
        try:
            return source.dataset._cardinality(inner)
        finally:
            inner.close()


def from_variant(variant, structure):
    """The dataset a scalar variant tensor stands for, with element spec `structure`
    (a nested structure of `tf.TypeSpec`s, as `Dataset.element_spec` gives)."""
    return VariantDataset(variant, structure)
