"""Dataset elements: nested structures of components, and their TypeSpecs.

As in TF1's tf.data, tuples, namedtuples and dicts are structure; everything else (a
list included) is one component. A component is a dense tensor (`tf.TensorSpec`), a
`tf.SparseTensor` (`SparseTensorSpec`), a `tf.RaggedTensor` (`RaggedTensorSpec`) or,
inside `window` and `group_by_window`, a dataset (`DatasetSpec`).

Inside the pipeline an element travels flat, one value per component: a NumPy array,
a `tf.SparseTensorValue` of arrays, a `tf.ragged.RaggedTensorValue`, or a
`DatasetValue`. Where components meet graph tensors (the placeholders of traced
functions, iterator outputs, cache files) each is encoded as its flat list of dense
tensors: one for a dense component, (indices, values, dense_shape) for a sparse one,
(flat_values, row_splits...) for a ragged one, none for a dataset. `kind(spec)` gives
those rules per component type, including how a component batches and unbatches.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.data.ta_elements import TensorArrayComponent
from tensorflux._src.data.type_specs import DatasetSpec, SparseTensorSpec
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors, tensor_shape
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorflux._src.framework.tensor_conversion import make_ndarray
from tensorflux._src.framework.type_spec import TensorSpec, TypeSpec
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.control.tensor_array_ops import TensorArray, TensorArraySpec
from tensorflux._src.ops.sparse.ragged_tensor import (RaggedTensor, RaggedTensorSpec,
                                                      RaggedTensorValue)


def is_structure(value) -> bool:
    return isinstance(value, (tuple, dict)) and not isinstance(value, SparseTensorValue)


def flatten(value) -> list:
    """Leaves in a fixed order: tuple order, dict keys sorted (as TF's nest does)."""
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in flatten(value[key])]
    if is_structure(value):
        return [leaf for item in value for leaf in flatten(item)]
    return [value]


def flatten_up_to(template, value) -> list:
    """`value`'s parts where `template` has leaves: shapes such as `((), (2,))` stay whole
    where the template (the types) has a leaf."""
    if isinstance(template, dict):
        if not isinstance(value, dict) or sorted(value) != sorted(template):
            raise ValueError(f"{value!r} does not have the structure {template!r}")
        return [leaf for key in sorted(template) for leaf in flatten_up_to(template[key],
                                                                            value[key])]
    if is_structure(template):
        if not isinstance(value, (tuple, list)) or len(value) != len(template):
            raise ValueError(f"{value!r} does not have the structure {template!r}")
        return [leaf for t, v in zip(template, value) for leaf in flatten_up_to(t, v)]
    return [value]


def map_structure(fn, template):
    """A structure like `template` with each leaf replaced by `fn(leaf)`."""
    return pack(template, [fn(leaf) for leaf in flatten(template)])


def pack(template, leaves):
    return _pack(template, iter(leaves))


def _pack(template, leaves):
    if isinstance(template, dict):
        items = {key: _pack(template[key], leaves) for key in sorted(template)}
        return type(template)((key, items[key]) for key in template)
    if is_structure(template):
        items = [_pack(item, leaves) for item in template]
        return type(template)(*items) if hasattr(template, "_fields") else tuple(items)
    return next(leaves)


def same_nesting(a, b) -> bool:
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and sorted(a) == sorted(b)
                and all(same_nesting(a[k], b[k]) for k in a))
    if is_structure(a) or is_structure(b):
        return (is_structure(a) and is_structure(b) and len(a) == len(b)
                and all(same_nesting(x, y) for x, y in zip(a, b)))
    return True


_same_nesting = same_nesting


# -- components -------------------------------------------------------------------------
class DatasetValue:
    """A dataset-valued component at run time (a window, a saved shard): something
    that can be iterated, each time from the start, as flat elements."""

    def __init__(self, elements=None, factory=None):
        self._elements, self._factory = elements, factory

    def iterate(self):
        return iter(self._elements) if self._factory is None else self._factory()


class _Dense:
    output_class = Tensor

    @staticmethod
    def flat_specs(spec):
        return [(spec.dtype, spec.shape)]

    @staticmethod
    def to_arrays(value):
        return [value]

    @staticmethod
    def from_arrays(spec, arrays):
        return arrays[0]

    @staticmethod
    def graph_flat(value):
        return [value]

    @staticmethod
    def graph_pack(spec, tensors):
        return tensors[0]

    @staticmethod
    def batch(values, component, spec):
        return stack_batch(values, component)

    @staticmethod
    def batch_size(value):
        return len(value)

    @staticmethod
    def unbatch(value):
        return [row(value, i) for i in range(len(value))]

    @staticmethod
    def batched_spec(spec, dim):
        return TensorSpec(tensor_shape.TensorShape([dim]).concatenate(spec.shape), spec.dtype)

    @staticmethod
    def unbatched_spec(spec):
        shape = spec.shape[1:] if spec.shape.ndims is not None else tensor_shape.unknown_shape()
        return TensorSpec(shape, spec.dtype)


class _Sparse:
    output_class = SparseTensor

    @staticmethod
    def flat_specs(spec):
        rank = spec.shape.ndims
        return [(_dtypes.int64, tensor_shape.TensorShape([None, rank])),
                (spec.dtype, tensor_shape.TensorShape([None])),
                (_dtypes.int64, tensor_shape.TensorShape([rank]))]

    @staticmethod
    def to_arrays(value):
        return [value.indices, value.values, value.dense_shape]

    @staticmethod
    def from_arrays(spec, arrays):
        return SparseTensorValue(*(np.asarray(a) for a in arrays))

    @staticmethod
    def graph_flat(value):
        return [value.indices, value.values, value.dense_shape]

    @staticmethod
    def graph_pack(spec, tensors):
        return SparseTensor(*tensors)

    @staticmethod
    def batch(values, component, spec):
        """TF1's batching of SparseTensors: a new leading dimension, each element's
        indices prefixed by its position, the dense shape the largest in each dim."""
        ranks = {len(v.dense_shape) for v in values}
        if len(ranks) != 1:
            raise errors.InvalidArgumentError(
                None, None, f"Cannot batch SparseTensors of different ranks in component "
                f"{component}: ranks {sorted(ranks)}")
        rank = ranks.pop()
        dense = np.max(np.stack([np.asarray(v.dense_shape, np.int64) for v in values]),
                       axis=0) if rank else np.zeros(0, np.int64)
        indices = [np.concatenate([np.full((len(v.values), 1), i, np.int64),
                                   np.asarray(v.indices, np.int64).reshape(-1, rank)], 1)
                   for i, v in enumerate(values)]
        return SparseTensorValue(
            np.concatenate(indices).astype(np.int64) if indices else
            np.zeros((0, rank + 1), np.int64),
            np.concatenate([np.asarray(v.values) for v in values]),
            np.concatenate([[len(values)], dense]).astype(np.int64))

    @staticmethod
    def batch_size(value):
        return int(value.dense_shape[0])

    @staticmethod
    def unbatch(value):
        indices = np.asarray(value.indices, np.int64)
        values = np.asarray(value.values)
        rows = indices[:, 0] if len(indices) else np.zeros(0, np.int64)
        inner = np.asarray(value.dense_shape, np.int64)[1:]
        out = []
        for i in range(int(value.dense_shape[0])):
            mask = rows == i
            out.append(SparseTensorValue(indices[mask][:, 1:], values[mask], inner.copy()))
        return out

    @staticmethod
    def batched_spec(spec, dim):
        return SparseTensorSpec(tensor_shape.TensorShape([dim]).concatenate(spec.shape),
                                spec.dtype)

    @staticmethod
    def unbatched_spec(spec):
        shape = spec.shape[1:] if spec.shape.ndims is not None else tensor_shape.unknown_shape()
        return SparseTensorSpec(shape, spec.dtype)


class _Ragged:
    """A RaggedTensor component, as TF's RaggedTensorSpec batches it: a batch gains an
    outer ragged dimension (ragged_rank + 1, rows of any length), unbatching drops one.
    A spec of ragged_rank 0 describes a dense tensor whose rows batch raggedly (rows of
    `from_tensor_slices` of a RaggedTensor, `ragged_batch`'s inputs): its values are
    arrays and its graph values Tensors, as in TF."""

    output_class = RaggedTensor

    @staticmethod
    def flat_specs(spec):
        rr, shape = spec.ragged_rank, spec.shape
        if rr == 0:
            return [(spec.dtype, shape)]
        inner = shape[rr + 1:] if shape.ndims is not None else tensor_shape.unknown_shape()
        nrows = shape.dims[0].value if shape.ndims else None
        splits = [(spec.row_splits_dtype, tensor_shape.TensorShape(
            [None if (i or nrows is None) else nrows + 1])) for i in range(rr)]
        return [(spec.dtype, tensor_shape.TensorShape([None]).concatenate(inner))] + splits

    @staticmethod
    def to_arrays(value):
        if not isinstance(value, RaggedTensorValue):
            return [value]
        return [value.flat_values] + list(value.nested_row_splits)

    @staticmethod
    def from_arrays(spec, arrays):
        value = np.asarray(arrays[0]) if not isinstance(arrays[0], np.ndarray) else arrays[0]
        for splits in reversed(arrays[1:]):
            value = RaggedTensorValue(value, np.asarray(splits))
        return value

    @staticmethod
    def graph_flat(value):
        return value._components() if isinstance(value, RaggedTensor) else [value]

    @staticmethod
    def graph_pack(spec, tensors):
        if len(tensors) == 1:
            return tensors[0]
        return RaggedTensor.from_nested_row_splits(tensors[0], tensors[1:], validate=False)

    @staticmethod
    def batch(values, component, spec):
        """The elements as the rows of one RaggedTensorValue (one more ragged level)."""
        if isinstance(values, np.ndarray):
            values = list(values)
        dtype = spec.row_splits_dtype.as_numpy_dtype
        levels = [_ragged_levels(v) for v in values]
        inner = {np.shape(lv[0])[1:] for lv in levels}
        if len(inner) > 1:
            raise errors.InvalidArgumentError(
                None, None, f"Cannot batch ragged tensors with different inner shapes in "
                f"component {component}: {sorted(list(s) for s in inner)}")
        nrows = [_ragged_nrows(v) for v in values]
        splits = [np.concatenate([[0], np.cumsum(nrows)]).astype(dtype)]
        for depth in range(1, len(levels[0])):
            offset, parts = 0, [np.zeros(1, dtype)]
            for lv in levels:
                parts.append(np.asarray(lv[depth][1:], dtype) + offset)
                offset += int(lv[depth][-1])
            splits.append(np.concatenate(parts))
        flat = _concat_rows([lv[0] for lv in levels])
        return _Ragged.from_arrays(None, [flat] + splits)

    @staticmethod
    def batch_size(value):
        return _ragged_nrows(value)

    @staticmethod
    def unbatch(value):
        if not isinstance(value, RaggedTensorValue):
            return [row(value, i) for i in range(len(value))]
        return [_ragged_rows(value.values, int(a), int(b))
                for a, b in zip(value.row_splits[:-1], value.row_splits[1:])]

    @staticmethod
    def batched_spec(spec, dim):
        return RaggedTensorSpec(tensor_shape.TensorShape([dim]).concatenate(spec.shape),
                                spec.dtype, spec.ragged_rank + 1, spec.row_splits_dtype)

    @staticmethod
    def unbatched_spec(spec):
        shape = spec.shape[1:] if spec.shape.ndims is not None else tensor_shape.unknown_shape()
        if spec.ragged_rank == 0:
            return TensorSpec(shape, spec.dtype)
        return RaggedTensorSpec(shape, spec.dtype, spec.ragged_rank - 1, spec.row_splits_dtype)


def ragged_from_array(array, ragged_rank, row_splits_dtype):
    """A dense array as a RaggedTensorValue of `ragged_rank` uniform ragged dimensions
    (TF's RaggedTensor.from_tensor; ragged_rank 0: the array itself)."""
    if ragged_rank == 0:
        return array
    shape = array.shape
    dtype = _dtypes.as_dtype(row_splits_dtype).as_numpy_dtype
    count = int(np.prod(shape[:ragged_rank + 1], dtype=np.int64))
    value = array.reshape((count,) + shape[ragged_rank + 1:])
    for level in range(ragged_rank, 0, -1):
        nrows = int(np.prod(shape[:level], dtype=np.int64))
        value = RaggedTensorValue(value, (np.arange(nrows + 1) * shape[level]).astype(dtype))
    return value


def _ragged_nrows(value):
    if isinstance(value, RaggedTensorValue):
        return len(value.row_splits) - 1
    return len(value)


def _ragged_levels(value):
    """[flat values, row splits of each level] of a component value (an array: just
    itself)."""
    if not isinstance(value, RaggedTensorValue):
        return [np.asarray(value) if not isinstance(value, np.ndarray) else value]
    return [value.flat_values] + list(value.nested_row_splits)


def _ragged_rows(values, start, limit):
    """Rows [start, limit) of `values` (an array or RaggedTensorValue), re-based."""
    if not isinstance(values, RaggedTensorValue):
        if values.dtype == object:
            out = np.empty((limit - start,) + values.shape[1:], object)
            out[...] = values[start:limit]
            return out
        return values[start:limit]
    splits = values.row_splits[start:limit + 1]
    inner = _ragged_rows(values.values, int(splits[0]), int(splits[-1]))
    return RaggedTensorValue(inner, (splits - splits[0]).astype(splits.dtype))


def _concat_rows(arrays):
    if any(a.dtype == object for a in arrays):
        total = sum(len(a) for a in arrays)
        out = np.empty((total,) + arrays[0].shape[1:], object)
        i = 0
        for a in arrays:
            out[i:i + len(a)] = a
            i += len(a)
        return out
    return np.concatenate(arrays)


class _Nested:
    """A dataset component: no tensors; traced functions see a Dataset in its place."""

    output_class = DatasetSpec

    @staticmethod
    def flat_specs(spec):
        return []

    @staticmethod
    def to_arrays(value):
        return []

    @staticmethod
    def graph_flat(value):
        return []

    @staticmethod
    def batch(values, component, spec):
        raise errors.InvalidArgumentError(
            None, None, f"Cannot batch component {component}: it is a dataset")

    @staticmethod
    def batch_size(value):
        raise errors.InvalidArgumentError(None, None, "Cannot unbatch a dataset component")

    @staticmethod
    def batched_spec(spec, dim):
        raise TypeError("batching a dataset of datasets is not supported; use flat_map or "
                        "interleave on the nested datasets")

    unbatched_spec = batched_spec


def kind(spec):
    if isinstance(spec, TensorSpec):
        return _Dense
    if isinstance(spec, SparseTensorSpec):
        return _Sparse
    if isinstance(spec, RaggedTensorSpec):
        return _Ragged
    if isinstance(spec, DatasetSpec):
        return _Nested
    if isinstance(spec, TensorArraySpec):
        return TensorArrayComponent
    raise TypeError(f"tf.data elements cannot have components of type {spec!r}")


def spec_of_graph_value(value) -> TypeSpec:
    """The spec of a graph-side component (Tensor, SparseTensor, RaggedTensor, Dataset)."""
    if isinstance(value, RaggedTensor):
        return value._type_spec
    if isinstance(value, TensorArray):
        return TensorArraySpec.from_value(value)
    if isinstance(value, SparseTensor):
        return SparseTensorSpec(value.shape, value.dtype)
    if isinstance(value, Tensor):
        return TensorSpec(value.shape, value.dtype.base_dtype)
    if hasattr(value, "_structure") and hasattr(value, "_iterate"):
        return DatasetSpec(value.element_spec)
    raise TypeError(f"{value!r} is not a tf.data component")


def ComponentSpec(dtype, shape):  # noqa: N802 - the dense spec, as the nodes build it
    return TensorSpec(shape, dtype)


def specs_compatible(a, b) -> bool:
    """Element specs (nested structures of TypeSpecs) that describe the same values."""
    if not same_nesting(a, b):
        return False
    return all(type(x) is type(y) and x.is_compatible_with(y)
               for x, y in zip(flatten(a), flatten(b)))


def most_specific_specs(a, b):
    return pack(a, [x.most_specific_compatible_type(y) for x, y in zip(flatten(a),
                                                                        flatten(b))])


class Structure:
    """The static description of a dataset's elements: the nesting (`template`) and one
    TypeSpec per leaf (`specs`, in flatten order)."""

    def __init__(self, template, specs):
        self.template = template  # the nesting, with any values as leaves
        self.specs = tuple(specs)
        self._kinds = tuple(kind(s) for s in self.specs)
        self.all_dense = all(k is _Dense for k in self._kinds)

    @classmethod
    def from_specs(cls, template, dtypes, shapes, classes=None):
        classes = classes or [Tensor] * len(dtypes)
        specs = []
        for d, s, c in zip(dtypes, shapes, classes):
            if isinstance(c, TypeSpec):  # TF's legacy class of a RaggedTensor: its spec
                specs.append(c)
                continue
            if c is TensorArray:  # TF's legacy TensorArray shape: [dynamic_size,
                shape = tensor_shape.as_shape(s)  # infer_shape] + element_shape
                specs.append(TensorArraySpec(shape[2:], d, bool(shape[0].value),
                                             bool(shape[1].value)))
                continue
            cls_ = SparseTensorSpec if c is SparseTensor else TensorSpec
            specs.append(cls_(tensor_shape.as_shape(s), _dtypes.as_dtype(d)))
        return cls(template, specs)

    @classmethod
    def from_element_spec(cls, element_spec):
        return cls(element_spec, flatten(element_spec))

    def pack(self, leaves):
        return pack(self.template, leaves)

    @property
    def element_spec(self):
        return self.pack(self.specs)

    @property
    def output_types(self):
        return self.pack([s if isinstance(s, DatasetSpec) else
                          s._to_legacy_output_types() if isinstance(s, TensorArraySpec)
                          else s.dtype for s in self.specs])

    @property
    def output_shapes(self):
        return self.pack([s if isinstance(s, DatasetSpec) else
                          s._to_legacy_output_shapes() if isinstance(s, TensorArraySpec)
                          else s.shape for s in self.specs])

    @property
    def output_classes(self):
        return self.pack([legacy_class(s) for s in self.specs])

    def map_specs(self, fn):
        return Structure(self.template, [fn(s, k) for s, k in zip(self.specs, self._kinds)])

    def with_shapes(self, shapes):
        return Structure(self.template, [_with_shape(s, tensor_shape.as_shape(shape))
                                         for s, shape in zip(self.specs, shapes)])

    def batched(self, dim):
        return self.map_specs(lambda s, k: k.batched_spec(s, dim))

    def unbatched(self):
        return self.map_specs(lambda s, k: k.unbatched_spec(s))

    def is_compatible_with(self, other) -> bool:
        return same_nesting(self.template, other.template) and len(self.specs) == len(
            other.specs) and all(type(a) is type(b) and a.is_compatible_with(b)
                                 for a, b in zip(self.specs, other.specs))

    def same_types(self, other) -> bool:
        """Same nesting, component classes and dtypes (shapes may differ)."""
        return same_nesting(self.template, other.template) and len(self.specs) == len(
            other.specs) and all(type(a) is type(b) and _dtype_of(a) == _dtype_of(b)
                                 for a, b in zip(self.specs, other.specs))

    def most_specific_compatible(self, other):
        return Structure(self.template, [a.most_specific_compatible_type(b)
                                         for a, b in zip(self.specs, other.specs)])

    def describe(self):
        return (f"types {self.output_types}, shapes "
                f"{map_structure(lambda s: s, self.output_shapes)}")

    # -- flat tensor encodings ---------------------------------------------------------
    def flat_tensor_specs(self):
        """(dtype, shape) of each dense tensor the components encode to, in order."""
        return [pair for s, k in zip(self.specs, self._kinds) for pair in k.flat_specs(s)]

    def to_arrays(self, element):
        """A flat element (one value per component) as its dense arrays."""
        if self.all_dense:
            return list(element)
        return [a for value, k in zip(element, self._kinds) for a in k.to_arrays(value)]

    def from_arrays(self, arrays):
        """The inverse of `to_arrays` (dataset components are not encoded)."""
        if self.all_dense:
            return tuple(arrays)
        out, i = [], 0
        for s, k in zip(self.specs, self._kinds):
            n = len(k.flat_specs(s))
            out.append(k.from_arrays(s, arrays[i:i + n]) if k is not _Nested else None)
            i += n
        return tuple(out)

    def graph_flat(self, leaves):
        """Graph components (Tensor, SparseTensor) as their flat tensors."""
        return [t for leaf, k in zip(leaves, self._kinds) for t in k.graph_flat(leaf)]

    def graph_pack(self, tensors):
        """Flat graph tensors back into the element's structure of graph components."""
        out, i = [], 0
        for s, k in zip(self.specs, self._kinds):
            if k is _Nested:
                raise TypeError("an element with dataset components cannot be produced as "
                                "tensors; use flat_map or interleave on the nested datasets")
            n = len(k.flat_specs(s))
            out.append(k.graph_pack(s, tensors[i:i + n]))
            i += n
        return self.pack(out)

    # -- batching ----------------------------------------------------------------------
    def batch(self, elements):
        """Consecutive flat elements as one batched flat element."""
        return tuple(k.batch([e[i] for e in elements], i, spec)
                     for i, (k, spec) in enumerate(zip(self._kinds, self.specs)))

    def batch_component(self, values, component):
        """One component of a batch from its values (a list, or an already stacked
        array from a vectorized function call)."""
        kind_ = self._kinds[component]
        if isinstance(values, np.ndarray) and kind_ is not _Ragged:
            return values
        return kind_.batch(values, component, self.specs[component])

    def unbatch(self, element):
        """A batched flat element as the list of its rows."""
        sizes = [k.batch_size(v) for v, k in zip(element, self._kinds)]
        if len(set(sizes)) > 1:
            raise errors.InvalidArgumentError(
                None, None, f"Input element must have the same batch size in each "
                f"component. Component sizes: {sizes}")
        if not sizes:
            return []
        columns = [k.unbatch(v) for v, k in zip(element, self._kinds)]
        return [tuple(c[i] for c in columns) for i in range(sizes[0])]

    def batch_size(self, element):
        return self._kinds[0].batch_size(element[0]) if element else 0


def legacy_class(spec):
    """TF1's output_classes entry: Tensor, SparseTensor or TensorArray; for ragged and
    dataset components TF gives the spec itself."""
    if isinstance(spec, (DatasetSpec, RaggedTensorSpec)):
        return spec
    return kind(spec).output_class


def _with_shape(spec, shape):
    if isinstance(spec, RaggedTensorSpec):
        return RaggedTensorSpec(shape, spec.dtype, spec.ragged_rank, spec.row_splits_dtype)
    return type(spec)(shape, spec.dtype)


def _dtype_of(spec):
    return spec if isinstance(spec, DatasetSpec) else spec.dtype


def legacy_spec(output_type, output_shape, output_class):
    """The component spec from TF1's (output_types, output_shapes, output_classes)."""
    if isinstance(output_class, TypeSpec):
        return output_class
    if output_class is SparseTensor:
        return SparseTensorSpec(output_shape, output_type)
    return TensorSpec(output_shape, output_type)


def to_array(value, dtype=None) -> np.ndarray:
    """One dense component as an array, with TF's dtype rules for Python values."""
    if isinstance(value, np.ndarray) and dtype is None:
        return value
    return make_ndarray(value, dtype=dtype)


def to_component(value):
    """A function's or source's host-side output as a component value."""
    if isinstance(value, SparseTensorValue):
        return SparseTensorValue(*(np.asarray(v) for v in value))
    if isinstance(value, RaggedTensorValue):
        return _Ragged.from_arrays(None, [to_array(a) for a in _Ragged.to_arrays(value)])
    return to_array(value)


def to_graph_ragged(value):
    """A RaggedTensorValue as a RaggedTensor of constants (TF converts it so)."""
    return RaggedTensor.from_nested_row_splits(
        constant(value.flat_values), [constant(s) for s in value.nested_row_splits],
        validate=False)


def spec_of_array(array) -> TensorSpec:
    return TensorSpec(tensor_shape.TensorShape(array.shape), _dtypes.as_dtype(array.dtype))


def spec_of_value(value) -> TypeSpec:
    """The spec of a host-side component value."""
    if isinstance(value, SparseTensorValue):
        return SparseTensorSpec.from_value(value)
    if isinstance(value, RaggedTensorValue):
        flat = spec_of_array(np.asarray(value.flat_values))
        shape = tensor_shape.TensorShape([len(value.row_splits) - 1] +
                                         [None] * value.ragged_rank).concatenate(flat.shape[1:])
        return RaggedTensorSpec(shape, flat.dtype, value.ragged_rank,
                                _dtypes.as_dtype(value.row_splits.dtype))
    return spec_of_array(np.asarray(value))


def check_element(structure, leaves, what):
    """Values produced at run time must match the declared types (from_generator)."""
    if len(leaves) != len(structure.specs):
        raise TypeError(f"{what} produced {len(leaves)} components, but the dataset declares "
                        f"{len(structure.specs)} ({structure.describe()})")
    out = []
    for leaf, spec in zip(leaves, structure.specs):
        try:
            array = to_array(leaf, spec.dtype)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{what} produced {leaf!r}, which is not convertible to "
                            f"{spec.dtype.name}: {exc}") from None
        if not spec.shape.is_compatible_with(array.shape):
            raise ValueError(f"{what} produced a value of shape {array.shape}, but the "
                             f"dataset declares shape {spec.shape}")
        out.append(array)
    return tuple(out)


def row(array, i):
    """`array[i]`, a string staying an object array (NumPy's bytes dtype would drop
    trailing NUL bytes, which serialized protos end with)."""
    value = array[i]
    if not isinstance(value, np.ndarray) and array.dtype == object:
        return np.array(value, dtype=object)
    return value


def stack_batch(values, component):
    """One dense component of a batch: the elements' values stacked."""
    if isinstance(values, np.ndarray):
        return values
    first = np.shape(values[0])
    for position, value in enumerate(values):
        if np.shape(value) != first:
            raise errors.InvalidArgumentError(
                None, None, f"Cannot batch tensors with different shapes in component "
                f"{component}. First element had shape {list(first)} and element {position} "
                f"had shape {list(np.shape(value))}.")
    if any(isinstance(v, (bytes, str)) or getattr(v, "dtype", None) == object
           for v in values):
        out = np.empty((len(values), *first), dtype=object)
        for i, value in enumerate(values):
            out[i, ...] = value
        return out
    return np.stack(values)


class HasStructure:
    """TF1's output_types / output_shapes / output_classes and TF's element_spec, read
    from `_structure` (datasets and iterators both describe their elements this way)."""

    _structure: Structure

    @property
    def element_spec(self):
        return self._structure.element_spec

    @property
    def output_types(self):
        return self._structure.output_types

    @property
    def output_shapes(self):
        return self._structure.output_shapes

    @property
    def output_classes(self):
        return self._structure.output_classes

