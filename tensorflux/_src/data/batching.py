"""batch, padded_batch, unbatch, rebatch, dense_to_sparse_batch and ragged_batch.

A batch stacks its elements' components on a new first dimension; SparseTensor
components batch as TF1 does (indices prefixed by the element's position, the dense
shape the largest of each dimension), RaggedTensor components as TF's RaggedTensorSpec
(a new outer ragged dimension: elements may differ in any ragged dimension). An element
that failed fails its batch.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.data import structure as _structure
from tensorflux._src.data.dataset_ops import Dataset, ElementError, groups_of
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors, tensor_shape
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.sparse_tensor import SparseTensorSpec, SparseTensorValue
from tensorflux._src.framework.type_spec import TensorSpec
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.sparse.ragged_tensor import RaggedTensorSpec


def _static_batch(batch_size, drop_remainder):
    return batch_size if (drop_remainder is True and isinstance(batch_size, int)) else None


def _batch_cardinality(ctx, child, batch_size, drop_remainder):
    n = child._cardinality(ctx)
    if n < 0:
        return n
    return n // batch_size if drop_remainder else -(-n // batch_size)


class _Batching(Dataset):
    """batch and padded_batch: one input, a batch size and drop_remainder."""

    def _setup(self, input_dataset, batch_size, drop_remainder):
        self._children = (input_dataset,)
        self._batch_size, self._drop_remainder = batch_size, drop_remainder
        self._tensor_args = (batch_size, drop_remainder)

    def _arguments(self, ctx):
        return (ctx.int_arg(self._batch_size, "batch_size", minimum=1),
                bool(ctx.value(self._drop_remainder)))

    def _cardinality(self, ctx):
        return _batch_cardinality(ctx, self._children[0], *self._arguments(ctx))


class BatchDataset(_Batching):
    """Consecutive elements stacked along a new first dimension."""

    def __init__(self, input_dataset, batch_size, drop_remainder=False):
        self._setup(input_dataset, batch_size, drop_remainder)
        self._structure = input_dataset._structure.batched(
            _static_batch(batch_size, drop_remainder))

    def _iterate(self, ctx):
        batch_size, drop_remainder = self._arguments(ctx)
        yield from self._children[0]._iterate_batches(ctx, batch_size, drop_remainder)


class PaddedBatchDataset(_Batching):
    """Batches whose components are padded to `padded_shapes` (unknown dimensions: to
    the batch's largest) with `padding_values` (default 0, or b"" for strings). A
    padded shape may hold tensors (bucket_by_sequence_length pads to a bucket's
    boundary): they are evaluated when the iterator starts."""

    def __init__(self, input_dataset, batch_size, padded_shapes=None, padding_values=None,
                 drop_remainder=False):
        structure = input_dataset._structure
        if not structure.all_dense:
            if any(isinstance(spec, SparseTensorSpec) for spec in structure.specs):
                raise TypeError("Batching of padded sparse tensors is not currently "
                                "supported")
            raise TypeError("padded_batch is only supported for datasets that produce "
                            "values with type TensorSpec")
        self._setup(input_dataset, batch_size, drop_remainder)
        if padded_shapes is None:  # TF 2's default: each component's own shape
            if any(spec.shape.ndims is None for spec in structure.specs):
                raise ValueError("You must provide `padded_shapes` argument because component "
                                 "has unknown rank.")
            padded_shapes = structure.output_shapes
        shapes = _flatten_like(structure, padded_shapes, "padded_shapes")
        self._shape_args = [_padded_shape_arg(s) for s in shapes]
        self._tensor_args += tuple(a for a in self._shape_args if isinstance(a, Tensor))
        static_shapes = [_static_padded_shape(a) for a in self._shape_args]
        for spec, shape in zip(structure.specs, static_shapes):
            if spec.shape.ndims is not None and (shape.ndims != spec.shape.ndims or not all(
                    p is None or s is None or s <= p for s, p in
                    zip(spec.shape.as_list(), shape.as_list()))):
                raise ValueError(f"The padded shape {shape} is not compatible with the "
                                 f"corresponding input component shape {spec.shape}.")
        if padding_values is None:
            values = [b"" if spec.dtype == _dtypes.string else 0 for spec in structure.specs]
        else:
            values = _flatten_like(structure, padding_values, "padding_values")
        self._padding_values = [
            v if isinstance(v, Tensor) else _structure.to_array(v, spec.dtype)
            for v, spec in zip(values, structure.specs)]
        self._tensor_args += tuple(v for v in self._padding_values if isinstance(v, Tensor))
        self._structure = structure.with_shapes(static_shapes).batched(
            _static_batch(batch_size, drop_remainder))

    def _iterate(self, ctx):
        batch_size, drop_remainder = self._arguments(ctx)
        targets = [_runtime_padded_shape(ctx, a) for a in self._shape_args]
        pads = [np.asarray(ctx.value(v)) for v in self._padding_values]
        for batch in groups_of(self._children[0]._iterate(ctx), batch_size, drop_remainder):
            if type(batch) is ElementError:
                yield batch
                continue
            try:
                yield tuple(_pad(batch, i, targets[i], pads[i]) for i in range(len(batch[0])))
            except errors.OpError as exc:
                yield ElementError(exc)


def _padded_shape_arg(shape):
    """A padded shape as a TensorShape, or as an int64 vector tensor (-1: unknown)."""
    if isinstance(shape, Tensor):
        return shape
    if isinstance(shape, (list, tuple)) and any(isinstance(d, Tensor) for d in shape):
        return convert_to_tensor([-1 if d is None else d for d in shape], _dtypes.int64)
    return tensor_shape.as_shape(shape)


def _static_padded_shape(arg):
    if isinstance(arg, Tensor):
        from tensorflux._src.ops.shape_fns import static_shape_from_tensor
        static = static_shape_from_tensor(arg)
        return tensor_shape.TensorShape([d if d is None or d >= 0 else None
                                         for d in static.as_list()]) \
            if static.ndims is not None else static
    return arg


def _runtime_padded_shape(ctx, arg):
    if isinstance(arg, Tensor):
        return [None if d < 0 else int(d) for d in np.asarray(ctx.value(arg)).ravel()]
    return arg.as_list()


def _pad(batch, component, padded_shape, padding_value):
    rank = np.ndim(batch[0][component])
    largest = np.max([np.shape(e[component]) for e in batch], axis=0).astype(int) \
        if rank else np.zeros(0, int)
    if len(padded_shape) != rank:
        raise errors.InvalidArgumentError(
            None, None, f"Mismatch between padded shape {padded_shape} and input tensor "
            f"shape {list(np.shape(batch[0][component]))} in component {component}")
    target = [d if d is not None else int(m) for d, m in zip(padded_shape, largest)]
    out = np.full([len(batch), *target], padding_value,
                  dtype=np.asarray(batch[0][component]).dtype)
    for position, element in enumerate(batch):
        value = np.asarray(element[component])
        if any(n > t for n, t in zip(value.shape, target)):
            raise errors.InvalidArgumentError(
                None, None, f"Attempted to pad to a smaller size than the input element: "
                f"component {component} of element {position} has shape "
                f"{list(value.shape)}, padded shape is {target}.")
        out[(position, *(slice(0, n) for n in value.shape))] = value
    return out


def _flatten_like(structure, value, name):
    try:
        return _structure.flatten_up_to(structure.template, value)
    except ValueError:
        raise ValueError(f"`{name}` must have the element structure "
                         f"({len(structure.specs)} components), got {value!r}") from None


class UnbatchDataset(Dataset):
    """Each element split along its first dimension into as many elements."""

    def __init__(self, input_dataset):
        structure = input_dataset._structure
        batch_dim = tensor_shape.Dimension(None)
        for spec in structure.specs:
            if spec.shape.ndims == 0:
                raise ValueError("Cannot unbatch an input with scalar components.")
            if spec.shape.ndims is not None:
                try:
                    batch_dim = batch_dim.merge_with(spec.shape.dims[0])
                except ValueError:
                    raise ValueError("Cannot unbatch an input whose components have "
                                     "different batch sizes.") from None
        self._children = (input_dataset,)
        self._structure = structure.unbatched()

    def _iterate(self, ctx):
        structure = self._children[0]._structure
        for element in self._children[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            try:
                rows = structure.unbatch(element)
            except errors.OpError as exc:
                yield ElementError(exc)
                continue
            yield from rows


class RebatchDataset(Dataset):
    """`rebatch(batch_size)`: the rows of the input's batches regrouped into batches of
    `batch_size` (a list of sizes is used in turn), as `unbatch().batch()` would."""

    def __init__(self, input_dataset, batch_size, drop_remainder=False):
        structure = input_dataset._structure
        for spec in structure.specs:
            if spec.shape.ndims == 0:
                raise ValueError("Invalid `input_dataset`. Expected a dataset whose elements "
                                 "have rank >= 1 but found a dataset whose elements are "
                                 "scalars. Fix the issue by adding the `batch` transformation "
                                 "to the dataset.")
        self._children = (input_dataset,)
        self._batch_size, self._drop_remainder = batch_size, drop_remainder
        self._tensor_args = (batch_size, drop_remainder)
        sizes = None if isinstance(batch_size, Tensor) else np.ravel(batch_size).tolist()
        static = sizes[0] if (sizes and len(set(sizes)) == 1 and drop_remainder is True) \
            else None
        self._structure = structure.unbatched().batched(static)

    def _iterate(self, ctx):
        sizes = [int(s) for s in np.ravel(ctx.value(self._batch_size))]
        if not sizes or min(sizes) < 1:
            raise errors.InvalidArgumentError(
                None, None, f"batch_size must be positive, got {sizes}")
        drop_remainder = bool(ctx.value(self._drop_remainder))
        inner = self._children[0]._structure
        rows, turn = [], 0
        for element in self._children[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            rows.extend(inner.unbatch(element))
            while len(rows) >= sizes[turn % len(sizes)]:
                size = sizes[turn % len(sizes)]
                group, rows = rows[:size], rows[size:]
                turn += 1
                yield inner.unbatched().batch(group)
        if rows and not drop_remainder:
            yield inner.unbatched().batch(rows)


class DenseToSparseBatchDataset(Dataset):
    """`dense_to_sparse_batch(batch_size, row_shape)`: variable-shaped dense elements
    batched into one SparseTensor of dense shape [batch, *row_shape] (a -1/None
    dimension: the batch's largest), holding every element of each input."""

    def __init__(self, input_dataset, batch_size, row_shape):
        structure = input_dataset._structure
        if _structure.is_structure(structure.template) or not structure.all_dense:
            raise TypeError(f"DenseToSparseDataset requires an input whose elements have a "
                            f"single component, whereas the input has "
                            f"{structure.output_types!r}.")
        self._children = (input_dataset,)
        self._batch_size = batch_size
        if isinstance(row_shape, Tensor):
            self._row_shape = row_shape
            static = _static_padded_shape(row_shape)
        else:
            static = tensor_shape.as_shape(row_shape)
            self._row_shape = [-1 if d is None else d for d in static.as_list()]
        self._tensor_args = (batch_size, self._row_shape if isinstance(row_shape, Tensor)
                             else None)
        from tensorflux._src.data.type_specs import SparseTensorSpec
        self._structure = _structure.Structure(None, [SparseTensorSpec(
            tensor_shape.TensorShape([None]).concatenate(static), structure.specs[0].dtype)])

    def _iterate(self, ctx):
        batch_size = ctx.int_arg(self._batch_size, "batch_size", minimum=1)
        row_shape = [int(d) for d in np.ravel(ctx.value(self._row_shape))]
        for group in groups_of(self._children[0]._iterate(ctx), batch_size, False):
            if type(group) is ElementError:
                yield group
                continue
            try:
                yield (_dense_to_sparse([np.asarray(e[0]) for e in group], row_shape),)
            except errors.OpError as exc:
                yield ElementError(exc)

    def _cardinality(self, ctx):
        return _batch_cardinality(ctx, self._children[0],
                                  ctx.int_arg(self._batch_size, "batch_size"), False)


def _shape_text(shape):
    return "[" + ",".join("?" if d < 0 else str(d) for d in shape) + "]"


def _dense_to_sparse(values, row_shape):
    dense = [len(values)] + [0 if d < 0 else d for d in row_shape]
    for value in values:
        if value.ndim != len(row_shape):
            raise errors.InvalidArgumentError(
                None, None, f"Input element had shape ({_shape_text(value.shape)}) that is "
                f"incompatible with the row shape ({_shape_text(row_shape)}).")
        for j, (n, limit) in enumerate(zip(value.shape, row_shape)):
            if limit < 0:
                dense[j + 1] = max(dense[j + 1], n)
            elif n > limit:
                raise errors.DataLossError(
                    None, None, f"Input element had shape ({_shape_text(value.shape)}) that "
                    f"is larger than the row shape ({_shape_text(row_shape)}).")
    indices = [np.concatenate([np.full((v.size, 1), i, np.int64),
                               np.argwhere(np.ones(v.shape, bool)).astype(np.int64)
                               .reshape(v.size, v.ndim)], 1)
               for i, v in enumerate(values)]
    return SparseTensorValue(np.concatenate(indices).astype(np.int64),
                             np.concatenate([v.ravel() for v in values]),
                             np.asarray(dense, np.int64))



class DenseToRaggedDataset(Dataset):
    """ragged_batch's first step (TF's _DenseToRaggedDataset): each dense component
    whose static shape has unknown dimensions becomes a RaggedTensor, ragged up to its
    last unknown dimension (a vector of unknown length: a RaggedTensorSpec of
    ragged_rank 0, still a dense value), so that the next `batch` accepts elements of
    different shapes. Fully defined components and other kinds stay as they are."""

    def __init__(self, input_dataset, row_splits_dtype=_dtypes.int64):
        row_splits_dtype = _dtypes.as_dtype(row_splits_dtype)
        structure = input_dataset._structure
        specs, self._ragged_ranks = [], []
        for spec in structure.specs:
            rank = None
            if isinstance(spec, TensorSpec) and spec.shape.ndims is not None and \
                    not spec.shape.is_fully_defined():
                rank = max(i for i, d in enumerate(spec.shape.as_list()) if d is None)
                spec = RaggedTensorSpec(spec.shape, spec.dtype, rank, row_splits_dtype)
            specs.append(spec)
            self._ragged_ranks.append(rank)
        self._children = (input_dataset,)
        self._row_splits_dtype = row_splits_dtype
        self._structure = _structure.Structure(structure.template, specs)

    def _iterate(self, ctx):
        for element in self._children[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            yield tuple(value if rank is None else
                        _structure.ragged_from_array(value, rank, self._row_splits_dtype)
                        for value, rank in zip(element, self._ragged_ranks))

    def _cardinality(self, ctx):
        return self._children[0]._cardinality(ctx)
