"""Datasets that start a pipeline: slices, whole tensors, lists, generators, ranges,
counters, random numbers, and the combinations zip and concatenate."""

from __future__ import annotations

import numpy as np

from tensorflux._src.data import structure as _structure
from tensorflux._src.data.dataset_ops import (INFINITE, UNKNOWN, Dataset, ElementError,
                                              pass_rng)
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors, random_seed, tensor_shape
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.composite_tensor import CompositeTensor
from tensorflux._src.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorflux._src.framework.tensor_conversion import _contains_tensor, convert_to_tensor
from tensorflux._src.ops.control.tensor_array_ops import TensorArray
from tensorflux._src.ops.sparse.ragged_tensor import RaggedTensor, RaggedTensorValue


def _normalize_leaf(leaf):
    """A component as a graph Tensor, SparseTensor or RaggedTensor (evaluated at
    initialization), an array, or a SparseTensorValue / RaggedTensorValue of arrays."""
    if isinstance(leaf, _GRAPH_COMPONENTS):
        return leaf
    if isinstance(leaf, TensorArray):  # TF 1.15 keeps its stacked elements (a TensorList)
        return leaf.stack()
    if isinstance(leaf, (SparseTensorValue, RaggedTensorValue)):
        return _structure.to_component(leaf)
    if hasattr(leaf, "_as_graph_element") or _contains_tensor(leaf):
        return convert_to_tensor(leaf)  # a variable, or a list holding tensors (packed)
    return _structure.to_array(leaf)


_GRAPH_COMPONENTS = (Tensor, SparseTensor, RaggedTensor)


def _graph_tensors(leaves):
    """The graph tensors the leaves are evaluated from."""
    out = []
    for leaf in leaves:
        if isinstance(leaf, CompositeTensor):
            out.extend(leaf._flat_tensors())
        elif isinstance(leaf, Tensor):
            out.append(leaf)
    return tuple(out)


def _leaf_value(ctx, leaf):
    if isinstance(leaf, CompositeTensor):
        return leaf._value_from_components([np.asarray(ctx.value(t))
                                            for t in leaf._flat_tensors()])
    if isinstance(leaf, Tensor):
        return np.asarray(ctx.value(leaf))
    return leaf


def _spec(leaf, drop_first=False):
    if isinstance(leaf, _GRAPH_COMPONENTS + (TensorArray,)):
        spec = _structure.spec_of_graph_value(leaf)
    else:
        spec = _structure.spec_of_value(leaf)
    if not drop_first:
        return spec
    if hasattr(spec, "shape") and spec.shape.ndims == 0:  # TensorArraySpec: no slices
        what = leaf.name if isinstance(leaf, Tensor) else repr(leaf)
        raise ValueError(f"from_tensor_slices needs components of rank >= 1, but {what} "
                         f"is a scalar")
    return _structure.kind(spec).unbatched_spec(spec)


def _spec_source(given, leaf):
    """What a component's spec is read from: a TensorArray itself (TensorArraySpec),
    else its normalized value."""
    return given if isinstance(given, TensorArray) else leaf


def _static_size(leaf):
    """The static size of a component's first dimension, or None."""
    if isinstance(leaf, np.ndarray):
        return leaf.shape[0]
    if isinstance(leaf, SparseTensorValue):
        return int(leaf.dense_shape[0])
    if isinstance(leaf, RaggedTensorValue):
        return len(leaf.row_splits) - 1
    shape = leaf.shape
    return shape.dims[0].value if shape.ndims else None


class TensorDataset(Dataset):
    """One element: the given structure (`from_tensors`)."""

    def __init__(self, tensors):
        given = _structure.flatten(tensors)
        leaves = [_normalize_leaf(leaf) for leaf in given]
        self._leaves = leaves
        self._tensor_args = _graph_tensors(leaves)
        self._structure = _structure.Structure(tensors, [_spec(_spec_source(g, leaf))
                                                         for g, leaf in zip(given, leaves)])

    def _iterate(self, ctx):
        yield tuple(_leaf_value(ctx, leaf) for leaf in self._leaves)

    def _cardinality(self, ctx):
        return 1


class TensorSliceDataset(Dataset):
    """One element per index of the components' first dimension (`from_tensor_slices`);
    a SparseTensor component is sliced into the SparseTensors of its rows."""

    def __init__(self, tensors):
        given = _structure.flatten(tensors)
        leaves = [_normalize_leaf(leaf) for leaf in given]
        self._leaves = leaves
        self._tensor_args = _graph_tensors(leaves)
        self._structure = _structure.Structure(
            tensors, [_spec(_spec_source(g, leaf), drop_first=True)
                      for g, leaf in zip(given, leaves)])
        sizes = {_static_size(leaf) for leaf in leaves} - {None}
        if len(sizes) > 1:
            raise ValueError(f"from_tensor_slices: all components must have the same size in "
                             f"the 0th dimension, got sizes {sorted(sizes)}")

    def _values(self, ctx):
        values = [_leaf_value(ctx, leaf) for leaf in self._leaves]
        sizes = [_structure.kind(s).batch_size(v) for s, v in
                 zip(self._structure.specs, values)]
        if len(set(sizes)) > 1:
            raise errors.InvalidArgumentError(
                None, None, f"from_tensor_slices: all components must have the same size in "
                f"the 0th dimension, got sizes {sorted(set(sizes))}")
        return values, (sizes[0] if sizes else 0)

    def _iterate(self, ctx):
        values, size = self._values(ctx)
        if self._structure.all_dense:
            for i in range(size):
                yield tuple(_structure.row(a, i) for a in values)
            return
        yield from self._structure.unbatch(tuple(values))

    def _cardinality(self, ctx):
        return self._values(ctx)[1]


class SparseTensorSliceDataset(Dataset):
    """TF1's `from_sparse_tensor_slices`: for each row of a SparseTensor, the tuple
    (indices, values, dense_shape) of that row (rank one less)."""

    def __init__(self, sparse_tensor):
        if not isinstance(sparse_tensor, SparseTensor):
            raise TypeError(f"`sparse_tensor` must be a `tf.SparseTensor` object. Was "
                            f"{sparse_tensor}.")
        self._sparse = sparse_tensor
        self._tensor_args = _graph_tensors([sparse_tensor])
        rank = sparse_tensor.indices.shape.dims[1].value
        if rank is None:
            rank = sparse_tensor.dense_shape.shape.dims[0].value
        rank = None if rank is None else rank - 1
        self._structure = _structure.Structure.from_specs(
            (None, None, None), [_dtypes.int64, sparse_tensor.dtype, _dtypes.int64],
            [[None, rank], [None], [rank]])

    def _iterate(self, ctx):
        value = _leaf_value(ctx, self._sparse)
        order = np.argsort(value.indices[:, 0], kind="stable") if len(value.indices) else []
        ordered = SparseTensorValue(value.indices[order], value.values[order],
                                    value.dense_shape)
        for row in _structure._Sparse.unbatch(ordered):
            yield (row.indices, row.values, row.dense_shape)

    def _cardinality(self, ctx):
        return int(_leaf_value(ctx, self._sparse).dense_shape[0])


class ListDataset(Dataset):
    """`tf.data.experimental.from_list`: the given elements, in order."""

    def __init__(self, elements):
        elements = list(elements)
        if not elements:
            raise ValueError("`elements` must not be empty.")
        self._elements = [[_normalize_leaf(leaf) for leaf in _structure.flatten(e)]
                          for e in elements]
        structure = _structure.Structure(elements[0], [_spec(l) for l in self._elements[0]])
        for element, leaves in zip(elements[1:], self._elements[1:]):
            other = _structure.Structure(element, [_spec(leaf) for leaf in leaves])
            if not structure.same_types(other):
                raise ValueError(f"The elements of `from_list` must have the same structure "
                                 f"and types; got {structure.describe()} and "
                                 f"{other.describe()}")
            structure = structure.most_specific_compatible(other)
        self._structure = structure
        self._tensor_args = tuple(t for leaves in self._elements for t in _graph_tensors(leaves))

    def _iterate(self, ctx):
        for leaves in self._elements:
            yield tuple(_leaf_value(ctx, leaf) for leaf in leaves)

    def _cardinality(self, ctx):
        return len(self._elements)


class FedDataset(Dataset):
    """A dataset argument of a traced function (a window): its elements are those of
    the `DatasetValue` each call supplies."""

    def __init__(self, element_spec):
        self._structure = _structure.Structure.from_element_spec(element_spec)

    def _iterate(self, ctx):
        yield from ctx.fed(self).iterate()

    def _describe(self, ctx):
        return ["FedDataset", repr(self._structure.element_spec)]


class CounterDataset(Dataset):
    """`Dataset.counter(start, step, dtype)`: start, start + step, ... forever."""

    def __init__(self, start=0, step=1, dtype=_dtypes.int64):
        dtype = _dtypes.as_dtype(dtype)
        self._start, self._step, self._dtype = start, step, dtype
        self._tensor_args = (start, step)
        self._structure = _structure.Structure.from_specs(None, [dtype], [[]])

    def _iterate(self, ctx):
        dtype = self._dtype.as_numpy_dtype
        value = np.asarray(ctx.value(self._start)).astype(dtype)
        step = np.asarray(ctx.value(self._step)).astype(dtype)
        while True:
            yield (np.asarray(value, dtype),)
            value = np.asarray(value + step, dtype)

    def _cardinality(self, ctx):
        return INFINITE


class RandomDataset(Dataset):
    """`Dataset.random(seed)`: uniformly distributed int64 scalars, forever (NumPy's
    generator: TF's Philox stream is not reproduced)."""

    def __init__(self, seed=None, rerandomize_each_iteration=None):
        self._seeds = random_seed.get_seed(seed)
        self._rerandomize = bool(rerandomize_each_iteration)
        self._tensor_args = (seed,) if isinstance(seed, Tensor) else ()
        self._seed_arg = seed
        self._structure = _structure.Structure.from_specs(None, [_dtypes.int64], [[]])

    def _iterate(self, ctx):
        seeds = self._seeds
        if isinstance(self._seed_arg, Tensor):
            seeds = (int(ctx.value(self._seed_arg)), 0)
        epoch = ctx.next_pass(self)
        rng = pass_rng(seeds, ctx, epoch if self._rerandomize else 0)
        info = np.iinfo(np.int64)
        while True:
            for value in rng.integers(info.min, info.max, size=256, endpoint=True,
                                      dtype=np.int64):
                yield (value,)

    def _cardinality(self, ctx):
        return INFINITE


class GeneratorDataset(Dataset):
    """Elements from a Python generator, checked against the declared types/shapes."""

    def __init__(self, generator, output_types, output_shapes=None, args=None):
        if not callable(generator):
            raise TypeError(f"`generator` must be callable (a function returning an "
                            f"iterator), got {type(generator).__name__}")
        types = _structure.flatten(output_types)
        if output_shapes is None:
            shapes = [tensor_shape.unknown_shape() for _ in types]
        else:
            try:
                shapes = _structure.flatten_up_to(output_types, output_shapes)
            except ValueError as exc:
                raise TypeError(f"`output_shapes` must match `output_types`: {exc}") from None
        self._generator = generator
        self._args = [_normalize_leaf(a) for a in (args or ())]
        self._tensor_args = tuple(a for a in self._args if isinstance(a, Tensor))
        self._structure = _structure.Structure.from_specs(output_types, types, shapes)

    def _iterate(self, ctx):
        args = [np.asarray(ctx.value(a)) for a in self._args]
        for value in self._generator(*args):
            leaves = _structure.flatten(value) if _structure.is_structure(
                self._structure.template) else [value]
            try:
                element = _structure.check_element(self._structure, leaves, "`generator`")
            except (TypeError, ValueError) as exc:
                # The generator itself is intact: as in TF, the next element follows.
                yield ElementError(errors.InvalidArgumentError(None, None, str(exc)))
                continue
            yield element


class RangeDataset(Dataset):
    """`range(stop)`, `range(start, stop[, step])`: int64 scalars, like Python's range."""

    def __init__(self, *args, output_type=_dtypes.int64):
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Dataset.range takes 1 to 3 arguments (stop, or start, stop "
                             f"[, step]), got {len(args)}")
        self._args = args
        self._tensor_args = tuple(a for a in args if isinstance(a, Tensor))
        self._dtype = _dtypes.as_dtype(output_type)
        self._structure = _structure.Structure.from_specs(None, [self._dtype], [[]])

    def _iterate(self, ctx):
        values = [ctx.int_arg(a, "Dataset.range argument") for a in self._args]
        if len(values) == 3 and values[2] == 0:
            raise errors.InvalidArgumentError(None, None, "step must be a non-zero integer.")
        dtype = self._dtype.as_numpy_dtype
        for i in range(*values):
            yield (np.asarray(i, dtype),)

    def _cardinality(self, ctx):
        values = [ctx.int_arg(a, "Dataset.range argument") for a in self._args]
        return len(range(*values)) if len(values) < 3 or values[2] else 0


class ZipDataset(Dataset):
    """Elements of several datasets side by side; ends with the shortest."""

    def __init__(self, datasets):
        children = _structure.flatten(datasets)
        for child in children:
            if not isinstance(child, Dataset):
                raise TypeError(f"Dataset.zip takes a (nested) tuple or dict of datasets, got "
                                f"a {type(child).__name__}")
        self._children = tuple(children)
        template = _structure.pack(datasets, [c._structure.template for c in children])
        specs = [spec for c in children for spec in c._structure.specs]
        self._structure = _structure.Structure(template, specs)

    def _iterate(self, ctx):
        iterators = [child._iterate(ctx) for child in self._children]
        for parts in zip(*iterators):
            failed = [p for p in parts if type(p) is ElementError]
            if failed:
                yield failed[0]
                continue
            yield tuple(component for part in parts for component in part)

    def _cardinality(self, ctx):
        counts = [child._cardinality(ctx) for child in self._children]
        if UNKNOWN in counts:
            return UNKNOWN
        finite = [n for n in counts if n != INFINITE]
        return min(finite) if finite else INFINITE


class ConcatenateDataset(Dataset):
    """All of one dataset, then all of another with the same element types."""

    def __init__(self, first, second):
        if not isinstance(second, Dataset):
            raise TypeError(f"concatenate takes a Dataset, got {type(second).__name__}")
        a, b = first._structure, second._structure
        if not a.same_types(b):
            raise TypeError(f"Two datasets to concatenate have different types "
                            f"{a.output_types} and {b.output_types}")
        self._children = (first, second)
        self._structure = a.most_specific_compatible(b)

    def _iterate(self, ctx):
        for child in self._children:
            yield from child._iterate(ctx)

    def _cardinality(self, ctx):
        counts = [child._cardinality(ctx) for child in self._children]
        if UNKNOWN in counts:
            return UNKNOWN
        return INFINITE if INFINITE in counts else sum(counts)
