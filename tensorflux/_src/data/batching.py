"""batch, padded_batch and unbatch."""

from __future__ import annotations

import numpy as np

from tensorflux._src.data import structure as _structure
from tensorflux._src.data.dataset_ops import Dataset, groups_of
from tensorflux._src.framework import errors, tensor_shape


def _batched_structure(structure, batch_size, drop_remainder, shapes=None):
    static = batch_size if (drop_remainder is True and isinstance(batch_size, int)) else None
    shapes = shapes or [s.shape for s in structure.specs]
    return structure.with_shapes([tensor_shape.TensorShape([static]).concatenate(shape)
                                  for shape in shapes])


class BatchDataset(Dataset):
    """Consecutive elements stacked along a new first dimension."""

    def __init__(self, input_dataset, batch_size, drop_remainder=False):
        self._children = (input_dataset,)
        self._batch_size, self._drop_remainder = batch_size, drop_remainder
        self._tensor_args = (batch_size, drop_remainder)
        self._structure = _batched_structure(input_dataset._structure, batch_size,
                                             drop_remainder)

    def _iterate(self, ctx):
        batch_size = ctx.int_arg(self._batch_size, "batch_size", minimum=1)
        drop_remainder = bool(ctx.value(self._drop_remainder))
        yield from self._children[0]._iterate_batches(ctx, batch_size, drop_remainder)


class PaddedBatchDataset(Dataset):
    """Batches whose components are padded to `padded_shapes` (unknown dimensions: to
    the batch's largest) with `padding_values` (default 0, or b"" for strings)."""

    def __init__(self, input_dataset, batch_size, padded_shapes, padding_values=None,
                 drop_remainder=False):
        structure = input_dataset._structure
        self._children = (input_dataset,)
        self._batch_size, self._drop_remainder = batch_size, drop_remainder
        self._tensor_args = (batch_size, drop_remainder)
        shapes = _flatten_like(structure, padded_shapes, "padded_shapes")
        self._padded_shapes = [tensor_shape.as_shape(s) for s in shapes]
        for spec, shape in zip(structure.specs, self._padded_shapes):
            if spec.shape.ndims is not None and shape.ndims != spec.shape.ndims:
                raise ValueError(f"The padded shape {shape} is not compatible with the "
                                 f"corresponding input component shape {spec.shape}.")
        if padding_values is None:
            values = [b"" if spec.dtype.name == "string" else 0 for spec in structure.specs]
        else:
            values = _flatten_like(structure, padding_values, "padding_values")
        self._padding_values = [
            np.asarray(_structure.to_array(v, spec.dtype)) for v, spec in
            zip(values, structure.specs)]
        self._structure = _batched_structure(structure, batch_size, drop_remainder,
                                             self._padded_shapes)

    def _iterate(self, ctx):
        batch_size = ctx.int_arg(self._batch_size, "batch_size", minimum=1)
        drop_remainder = bool(ctx.value(self._drop_remainder))
        for batch in groups_of(self._children[0]._iterate(ctx), batch_size, drop_remainder):
            yield tuple(self._pad(batch, i) for i in range(len(batch[0])))

    def _pad(self, batch, component):
        padded_shape = self._padded_shapes[component]
        largest = np.max([np.shape(e[component]) for e in batch], axis=0).astype(int) \
            if np.ndim(batch[0][component]) else np.zeros(0, int)
        target = [d.value if d.value is not None else int(m)
                  for d, m in zip(padded_shape.dims, largest)]
        out = np.full([len(batch), *target], self._padding_values[component],
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
        for spec in structure.specs:
            if spec.shape.ndims == 0:
                raise ValueError("Cannot unbatch an input with scalar components.")
        self._children = (input_dataset,)
        self._structure = structure.with_shapes(
            [s.shape[1:] if s.shape.ndims is not None else tensor_shape.unknown_shape()
             for s in structure.specs])

    def _iterate(self, ctx):
        for element in self._children[0]._iterate(ctx):
            sizes = {len(c) for c in element}
            if len(sizes) != 1:
                raise errors.InvalidArgumentError(
                    None, None, f"Input element must have the same batch size in each "
                    f"component. Component sizes: {[len(c) for c in element]}")
            for i in range(sizes.pop()):
                yield tuple(c[i] for c in element)

