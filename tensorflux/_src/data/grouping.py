"""window, group_by_window, group_by_reducer and bucket_by_sequence_length.

`window` makes elements whose components are datasets (`DatasetSpec`); each holds its
window's values of that component as a `DatasetValue`. A function given such an
element (flat_map, interleave, the reduce_func of group_by_window) sees a `FedDataset`
in its place, whose elements each call supplies.

group_by_window and group_by_reducer keep TF's kernel order: a key's window is
produced as soon as it is full; at the end of the input the remaining groups follow
in increasing key order.
"""

from __future__ import annotations

import collections

import numpy as np

from tensorflux._src.data import structure as _structure
from tensorflux._src.data.dataset_ops import Dataset, ElementError
from tensorflux._src.data.element_ops import trace_state_function
from tensorflux._src.data.functions import StructuredFunction
from tensorflux._src.data.type_specs import DatasetSpec
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors, tensor_shape
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.type_spec import TensorSpec
from tensorflux._src.ops import constant
from tensorflux._src.ops.array import gather_ops
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.math import math_ops, reduce_ops

_KEY = _structure.Structure(None, [TensorSpec([], _dtypes.int64)])


def _positive(ctx, arg, what):
    value = ctx.int_arg(arg, what.lower())
    if value <= 0:
        raise errors.InvalidArgumentError(
            None, None, f"{what} must be greater than zero, but got {value}.")
    return value


class WindowDataset(Dataset):
    """`window(size, shift, stride, drop_remainder)`: windows of `size` elements taken
    every `stride`-th, starting every `shift` elements; each component becomes a dataset."""

    def __init__(self, input_dataset, size, shift=None, stride=1, drop_remainder=False):
        self._children = (input_dataset,)
        self._size, self._stride, self._drop_remainder = size, stride, drop_remainder
        self._shift = size if shift is None else shift
        self._tensor_args = (size, self._shift, stride, drop_remainder)
        self._structure = input_dataset._structure.map_specs(lambda s, k: DatasetSpec(s))

    def _arguments(self, ctx):
        return (_positive(ctx, self._size, "Window size"),
                _positive(ctx, self._shift, "Window shift"),
                _positive(ctx, self._stride, "Window stride"),
                bool(ctx.value(self._drop_remainder)))

    def _iterate(self, ctx):
        size, shift, stride, drop_remainder = self._arguments(ctx)
        source = self._children[0]._iterate(ctx)
        buffer = collections.deque()  # (position, element) from position `start` on
        next_position, exhausted, start = 0, False, 0
        while True:
            last = start + (size - 1) * stride
            while not exhausted and next_position <= last:
                element = next(source, None)
                if element is None:
                    exhausted = True
                elif type(element) is ElementError:
                    yield element
                else:
                    buffer.append((next_position, element))
                    next_position += 1
            window = [e for p, e in buffer if p >= start and (p - start) % stride == 0
                      and p <= last]
            if not window or (len(window) < size and drop_remainder):
                return
            yield tuple(_structure.DatasetValue([(e[i],) for e in window])
                        for i in range(len(window[0])))
            start += shift
            while buffer and buffer[0][0] < start:
                buffer.popleft()

    def _cardinality(self, ctx):
        size, shift, stride, drop_remainder = self._arguments(ctx)
        n = self._children[0]._cardinality(ctx)
        if n < 0:
            return n
        if drop_remainder:
            span = (size - 1) * stride + 1
            return 0 if n < span else (n - span) // shift + 1
        return -(-n // shift)


def _scalar_int64_function(func, structure, transformation, message):
    function = StructuredFunction(func, structure, transformation)
    specs = function.output_structure.specs
    if len(specs) != 1 or not isinstance(specs[0], TensorSpec) or \
            specs[0].dtype != _dtypes.int64 or not specs[0].shape.is_compatible_with([]):
        out = function.output_structure
        raise ValueError(message.format(type=out.output_types, shape=out.output_shapes))
    return function


def _key_function(key_func, structure, transformation):
    return _scalar_int64_function(
        key_func, structure, transformation,
        "`key_func` must return a single tf.int64 tensor. Got type={type} and shape={shape}")


def _key(function, element):
    value = np.asarray(function(element)[0])
    if value.size != 1:
        raise errors.InvalidArgumentError(None, None, "`key_func` must return a scalar int64.")
    return int(value.reshape(()))


class GroupByWindowDataset(Dataset):
    def __init__(self, input_dataset, key_func, reduce_func, window_size_func):
        structure = input_dataset._structure
        self._children = (input_dataset,)
        self._key_function = _key_function(key_func, structure, "group_by_window")
        self._size_function = _scalar_int64_function(
            window_size_func, _KEY, "group_by_window",
            "`window_size_func` must return a single tf.int64 scalar tensor.")

        def checked_reduce(key, window):
            result = reduce_func(key, window)
            if not isinstance(result, Dataset):
                raise TypeError("`reduce_func` must return a `Dataset` object.")
            return result

        reduce_inputs = _structure.Structure(
            (None, None), [TensorSpec([], _dtypes.int64), DatasetSpec(structure.element_spec)])
        self._reduce_function = StructuredFunction(checked_reduce, reduce_inputs,
                                                   "group_by_window", returns_dataset=True)
        self._functions = (self._key_function, self._size_function, self._reduce_function)
        self._tensor_args = self._reduce_function.outer_inputs
        self._structure = self._reduce_function.output_structure

    def _iterate(self, ctx):
        key_of = ctx.function(self._key_function)
        size_of = ctx.function(self._size_function)
        groups, sizes = {}, {}
        for element in self._children[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            try:
                key = _key(key_of, element)
                if key not in sizes:
                    size = int(np.asarray(size_of((np.int64(key),))[0]))
                    if size <= 0:
                        raise errors.InvalidArgumentError(
                            None, None, f"Window size must be greater than zero, but got "
                            f"{size}.")
                    sizes[key] = size
            except errors.OpError as exc:
                yield ElementError(exc)
                continue
            group = groups.setdefault(key, [])
            group.append(element)
            if len(group) == sizes[key]:
                del groups[key]
                yield from self._flush(ctx, key, group)
        for key in sorted(groups):
            yield from self._flush(ctx, key, groups[key])

    def _flush(self, ctx, key, group):
        function = self._reduce_function
        try:
            values = ctx.function(function).dataset_values(
                (np.int64(key), _structure.DatasetValue(group)))
        except errors.OpError as exc:
            yield ElementError(exc)
            return
        yield from function.dataset._iterate(ctx.child(values))


def group_by_window(dataset, key_func, reduce_func, window_size=None, window_size_func=None):
    if (window_size is not None and window_size_func) or \
            not (window_size is not None or window_size_func):
        raise ValueError("Either the `window_size` argument or the `window_size_func` "
                         "argument must be specified.")
    if window_size is not None:
        def window_size_func(unused_key):
            return convert_to_tensor(window_size, dtype=_dtypes.int64)
    return GroupByWindowDataset(dataset, key_func, reduce_func, window_size_func)


class Reducer:
    """`tf.data.experimental.Reducer(init_func, reduce_func, finalize_func)`: how
    group_by_reducer folds each group: init_func(key) -> state, reduce_func(state,
    element) -> state, finalize_func(state) -> output."""

    def __init__(self, init_func, reduce_func, finalize_func):
        self._init_func, self._reduce_func = init_func, reduce_func
        self._finalize_func = finalize_func

    @property
    def init_func(self):
        return self._init_func

    @property
    def reduce_func(self):
        return self._reduce_func

    @property
    def finalize_func(self):
        return self._finalize_func


class GroupByReducerDataset(Dataset):
    def __init__(self, input_dataset, key_func, reducer):
        structure = input_dataset._structure
        self._children = (input_dataset,)
        self._key_function = _key_function(key_func, structure, "group_by_reducer")
        self._init_function = StructuredFunction(reducer.init_func, _KEY, "group_by_reducer")
        self._reduce_function, state = trace_state_function(
            reducer.reduce_func, self._init_function.output_structure, structure,
            "group_by_reducer")
        self._finalize_function = StructuredFunction(reducer.finalize_func, state,
                                                     "group_by_reducer")
        self._functions = (self._key_function, self._init_function, self._reduce_function,
                           self._finalize_function)
        self._structure = self._finalize_function.output_structure

    def _iterate(self, ctx):
        key_of = ctx.function(self._key_function)
        init = ctx.function(self._init_function)
        reduce_ = ctx.function(self._reduce_function)
        finalize = ctx.function(self._finalize_function)
        states = {}
        for element in self._children[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            try:
                key = _key(key_of, element)
                state = states[key] if key in states else tuple(init((np.int64(key),)))
                states[key] = tuple(reduce_(state + tuple(element)))
            except errors.OpError as exc:
                yield ElementError(exc)
        for key in sorted(states):
            try:
                yield tuple(finalize(states[key]))
            except errors.OpError as exc:
                yield ElementError(exc)


def group_by_reducer(key_func, reducer):
    """`tf.data.experimental.group_by_reducer`: a transformation for `apply`."""
    return lambda dataset: GroupByReducerDataset(dataset, key_func, reducer)


def bucket_by_sequence_length(dataset, element_length_func, bucket_boundaries,
                              bucket_batch_sizes, padded_shapes=None, padding_values=None,
                              pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    """Batches elements of similar length together, padded within each batch (TF's
    construction: group_by_window keyed by the bucket of element_length_func)."""
    with _graph.name_scope(None, "bucket_by_seq_length"):
        if len(bucket_batch_sizes) != len(bucket_boundaries) + 1:
            raise ValueError("len(bucket_batch_sizes) must equal len(bucket_boundaries) + 1")
        batch_sizes = constant.constant(bucket_batch_sizes, dtype=_dtypes.int64)

        def element_to_bucket_id(*args):
            seq_length = element_length_func(*args)
            boundaries = list(bucket_boundaries)
            buckets_min = [np.iinfo(np.int32).min] + boundaries
            buckets_max = boundaries + [np.iinfo(np.int32).max]
            conditions = math_ops.logical_and(math_ops.less_equal(buckets_min, seq_length),
                                              math_ops.less(seq_length, buckets_max))
            return reduce_ops.reduce_min(gather_ops.where(conditions))

        def window_size_fn(bucket_id):
            return batch_sizes[bucket_id]

        def make_padded_shapes(shapes, none_filler=None):
            flat = _structure.flatten_up_to(dataset._structure.template, shapes)
            padded = []
            for shape in flat:
                dims = tensor_shape.as_shape(shape).as_list()
                padded.append([none_filler if d is None else d for d in dims])
            return _structure.pack(dataset._structure.template, padded)

        def batching_fn(bucket_id, grouped_dataset):
            batch_size = window_size_fn(bucket_id)
            if no_padding:
                return grouped_dataset.batch(batch_size, drop_remainder=drop_remainder)
            none_filler = None
            if pad_to_bucket_boundary:
                check = check_ops.assert_less(
                    bucket_id, constant.constant(len(bucket_batch_sizes) - 1,
                                                 dtype=_dtypes.int64),
                    message="When pad_to_bucket_boundary=True, elements must have length < "
                            "max(bucket_boundaries).")
                with _graph.control_dependencies([check]):
                    boundaries = constant.constant(bucket_boundaries, dtype=_dtypes.int64)
                    none_filler = boundaries[bucket_id] - 1
            shapes = make_padded_shapes(padded_shapes or grouped_dataset.output_shapes,
                                        none_filler)
            return grouped_dataset.padded_batch(batch_size, shapes, padding_values,
                                                drop_remainder=drop_remainder)

        return group_by_window(dataset, element_to_bucket_id, batching_fn,
                               window_size_func=window_size_fn)

