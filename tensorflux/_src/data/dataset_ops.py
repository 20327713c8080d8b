"""`tf.data.Dataset`: the TF1 API over a tree of dataset nodes.

A Dataset is a description: its element structure, the datasets it reads, and the
graph tensors its arguments come from (a placeholder batch size, slices fed at
initialization). Nothing runs until an iterator is initialized in a Session: the
initializer op evaluates those tensors, and the elements are produced on the host by
Python generators (`_iterate`), one node per transformation, with the functions given
to map/filter/... running as compiled graph functions (functions.py).

The node classes live in sources.py, transformations.py and readers.py; this module
holds the base class, the method-chaining API and the run-time context.
"""

from __future__ import annotations

import secrets

import numpy as np

from tensorflux._src.data import structure as _structure
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework.operation import Tensor

AUTOTUNE = -1
INFINITE = -1  # tf.data.INFINITE_CARDINALITY
UNKNOWN = -2  # tf.data.UNKNOWN_CARDINALITY
# What the host ops over datasets take as inputs: a dataset's graph tensors, which may
# include a variant (a dataset passed as a tensor, experimental.to_variant).
INPUT_TYPES = _dtypes.ALL + (_dtypes.variant,)


class Dataset(_structure.HasStructure):
    """A sequence of elements, each a nested structure of tensors."""

    # Set by subclasses: the element Structure, the input datasets, tensor arguments
    # and traced functions (StructuredFunction) this node needs at iteration time.
    _children: tuple = ()
    _tensor_args: tuple = ()
    _functions: tuple = ()

    def _iterate(self, ctx):
        """A generator of elements (tuples of arrays, flat) for one pass."""
        raise NotImplementedError

    def _iterate_batches(self, ctx, batch_size, drop_remainder):
        """`batch`'s input: groups of `batch_size` elements, each component stacked.
        A node that can make a whole group at once (map) overrides this."""
        for group in groups_of(self._iterate(ctx), batch_size, drop_remainder):
            if type(group) is ElementError:
                yield group
                continue
            try:
                yield self._structure.batch(group)
            except errors.OpError as exc:
                yield ElementError(exc)

    def _inputs(self):
        """Every graph tensor iteration needs, in a stable order without repeats."""
        found = {}
        for t in self._tensor_args:
            if isinstance(t, Tensor):
                found.setdefault(t, None)
        for function in self._functions:
            for t in function.captured:
                found.setdefault(t, None)
        for child in self._children:
            for t in child._inputs():
                found.setdefault(t, None)
        return list(found)

    def __repr__(self):
        shapes = _structure.map_structure(str, self.output_shapes)
        return f"<{type(self).__name__} shapes: {shapes}, types: {self.output_types}>"

    def __iter__(self):
        from tensorflux._src.data.iterator_ops import EagerIterator
        from tensorflux._src.framework.behaviour import executing_eagerly
        if not executing_eagerly():
            raise RuntimeError("__iter__() is only supported inside of tf.function or when "
                               "eager execution is enabled.")
        return EagerIterator(self)

    # -- sources -----------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors):
        from tensorflux._src.data.sources import TensorSliceDataset
        return TensorSliceDataset(tensors)

    @staticmethod
    def from_tensors(tensors):
        from tensorflux._src.data.sources import TensorDataset
        return TensorDataset(tensors)

    @staticmethod
    def from_sparse_tensor_slices(sparse_tensor):
        """Deprecated (TF1): the rows of a SparseTensor, each a SparseTensor."""
        from tensorflux._src.data.sources import SparseTensorSliceDataset
        return SparseTensorSliceDataset(sparse_tensor)

    @staticmethod
    def from_generator(generator, output_types, output_shapes=None, args=None):
        from tensorflux._src.data.sources import GeneratorDataset
        return GeneratorDataset(generator, output_types, output_shapes, args)

    @staticmethod
    def range(*args, **kwargs):
        from tensorflux._src.data.sources import RangeDataset
        kwargs.pop("name", None)
        return RangeDataset(*args, **kwargs)

    @staticmethod
    def zip(datasets, name=None):
        from tensorflux._src.data.sources import ZipDataset
        return ZipDataset(datasets)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None, name=None):
        from tensorflux._src.data.readers import list_files
        return list_files(file_pattern, shuffle, seed)

    @staticmethod
    def counter(start=0, step=1, dtype=_dtypes.int64, name=None):
        from tensorflux._src.data.sources import CounterDataset
        return CounterDataset(start, step, dtype)

    @staticmethod
    def random(seed=None, rerandomize_each_iteration=None, name=None):
        from tensorflux._src.data.sources import RandomDataset
        return RandomDataset(seed, rerandomize_each_iteration)

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
        from tensorflux._src.data.selection import choose_from_datasets
        return choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None):
        from tensorflux._src.data.selection import sample_from_datasets
        return sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset,
                                    rerandomize_each_iteration)

    @staticmethod
    def load(path, element_spec=None, compression=None, reader_func=None, wait=False):
        from tensorflux._src.data.snapshot import load
        return load(path, element_spec, compression, reader_func, wait)

    def concatenate(self, dataset, name=None):
        from tensorflux._src.data.sources import ConcatenateDataset
        return ConcatenateDataset(self, dataset)

    # -- transformations -------------------------------------------------------------
    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        from tensorflux._src.data.transformations import MapDataset
        return MapDataset(self, map_func, num_parallel_calls)

    def map_with_legacy_function(self, map_func, num_parallel_calls=None,
                                 deterministic=None):
        """TF1's map traced as a legacy Defun; the same transformation here."""
        return self.map(map_func, num_parallel_calls)

    def flat_map(self, map_func, name=None):
        from tensorflux._src.data.transformations import FlatMapDataset
        return FlatMapDataset(self, map_func)

    def interleave(self, map_func, cycle_length=AUTOTUNE, block_length=1,
                   num_parallel_calls=None, deterministic=None, name=None):
        from tensorflux._src.data.transformations import InterleaveDataset
        return InterleaveDataset(self, map_func, cycle_length, block_length,
                                 num_parallel_calls)

    def filter(self, predicate, name=None):
        from tensorflux._src.data.transformations import FilterDataset
        return FilterDataset(self, predicate)

    def filter_with_legacy_function(self, predicate):
        """TF1's filter traced as a legacy Defun; the same transformation here."""
        return self.filter(predicate)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None, name=None):
        from tensorflux._src.data.transformations import ShuffleDataset
        return ShuffleDataset(self, buffer_size, seed,
                              True if reshuffle_each_iteration is None
                              else reshuffle_each_iteration)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None,
              deterministic=None, name=None):
        from tensorflux._src.data.batching import BatchDataset
        return BatchDataset(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False, name=None):
        from tensorflux._src.data.batching import PaddedBatchDataset
        return PaddedBatchDataset(self, batch_size, padded_shapes, padding_values,
                                  drop_remainder)

    def unbatch(self, name=None):
        from tensorflux._src.data.batching import UnbatchDataset
        return UnbatchDataset(self)

    def rebatch(self, batch_size, drop_remainder=False, name=None):
        from tensorflux._src.data.batching import RebatchDataset
        return RebatchDataset(self, batch_size, drop_remainder)

    def ragged_batch(self, batch_size, drop_remainder=False, row_splits_dtype=_dtypes.int64,
                     name=None):
        """Batches elements of different shapes as RaggedTensors: a dense component with
        unknown dimensions becomes ragged up to its last unknown one; fully defined
        components batch as `batch` does, RaggedTensors gain an outer ragged dimension."""
        from tensorflux._src.data.batching import DenseToRaggedDataset
        return DenseToRaggedDataset(self, row_splits_dtype).batch(batch_size, drop_remainder)

    def sparse_batch(self, batch_size, row_shape, name=None):
        from tensorflux._src.data.batching import DenseToSparseBatchDataset
        return DenseToSparseBatchDataset(self, batch_size, row_shape)

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
        from tensorflux._src.data.grouping import WindowDataset
        return WindowDataset(self, size, shift, stride, drop_remainder)

    def group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None,
                        name=None):
        from tensorflux._src.data.grouping import group_by_window
        return group_by_window(self, key_func, reduce_func, window_size, window_size_func)

    def bucket_by_sequence_length(self, element_length_func, bucket_boundaries,
                                  bucket_batch_sizes, padded_shapes=None,
                                  padding_values=None, pad_to_bucket_boundary=False,
                                  no_padding=False, drop_remainder=False, name=None):
        from tensorflux._src.data.grouping import bucket_by_sequence_length
        return bucket_by_sequence_length(
            self, element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes,
            padding_values, pad_to_bucket_boundary, no_padding, drop_remainder)

    def repeat(self, count=None, name=None):
        from tensorflux._src.data.transformations import RepeatDataset
        return RepeatDataset(self, count)

    def take(self, count, name=None):
        from tensorflux._src.data.transformations import TakeDataset
        return TakeDataset(self, count)

    def skip(self, count, name=None):
        from tensorflux._src.data.transformations import SkipDataset
        return SkipDataset(self, count)

    def shard(self, num_shards, index, name=None):
        from tensorflux._src.data.transformations import ShardDataset
        return ShardDataset(self, num_shards, index)

    def prefetch(self, buffer_size, name=None):
        from tensorflux._src.data.prefetch import PrefetchDataset
        return PrefetchDataset(self, buffer_size)

    def cache(self, filename="", name=None):
        from tensorflux._src.data.cache import CacheDataset
        return CacheDataset(self, filename)

    def enumerate(self, start=0, name=None):
        from tensorflux._src.data.element_ops import enumerate_dataset
        return enumerate_dataset(self, start)

    def scan(self, initial_state, scan_func, name=None):
        from tensorflux._src.data.element_ops import ScanDataset
        return ScanDataset(self, initial_state, scan_func)

    def take_while(self, predicate, name=None):
        from tensorflux._src.data.element_ops import TakeWhileDataset
        return TakeWhileDataset(self, predicate)

    def unique(self, name=None):
        from tensorflux._src.data.element_ops import UniqueDataset
        return UniqueDataset(self)

    def ignore_errors(self, log_warning=False, name=None):
        from tensorflux._src.data.element_ops import IgnoreErrorsDataset
        return IgnoreErrorsDataset(self, log_warning)

    def rejection_resample(self, class_func, target_dist, initial_dist=None, seed=None,
                           name=None):
        from tensorflux._src.data.selection import rejection_resample
        return rejection_resample(self, class_func, target_dist, initial_dist, seed)

    def snapshot(self, path, compression="AUTO", reader_func=None, shard_func=None,
                 name=None):
        from tensorflux._src.data.snapshot import SnapshotDataset
        return SnapshotDataset(self, path, compression, reader_func, shard_func)

    def apply(self, transformation_func):
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError(f"`transformation_func` must return a Dataset, got "
                            f"{type(result).__name__}")
        return result

    def with_options(self, options, name=None):
        from tensorflux._src.data.options import OptionsDataset
        return OptionsDataset(self, options)

    def options(self):
        """The options of this dataset and its inputs, merged (TF's precedence: the
        options set closer to the end of the pipeline win)."""
        from tensorflux._src.data.options import Options, merge_options
        found = [child.options() for child in self._children]
        own = getattr(self, "_own_options", None)
        merged = merge_options(Options(), *found, *([own] if own is not None else []))
        merged._set_mutable(False)
        return merged

    # -- whole-dataset ops and iteration ---------------------------------------------
    def reduce(self, initial_state, reduce_func, name=None):
        from tensorflux._src.data.consumers import reduce_dataset
        return reduce_dataset(self, initial_state, reduce_func, name)

    def get_single_element(self, name=None):
        from tensorflux._src.data.consumers import get_single_element
        return get_single_element(self, name)

    def cardinality(self):
        from tensorflux._src.data.consumers import cardinality
        return cardinality(self)

    def fingerprint(self):
        from tensorflux._src.data.consumers import fingerprint
        return fingerprint(self)

    def save(self, path, compression=None, shard_func=None, checkpoint_args=None):
        from tensorflux._src.data.snapshot import save
        return save(self, path, compression, shard_func, checkpoint_args)

    def as_numpy_iterator(self):
        from tensorflux._src.data.iterator_ops import NumpyIterator
        return NumpyIterator(self)

    def make_one_shot_iterator(self):
        from tensorflux._src.data.iterator_ops import Iterator
        return Iterator._one_shot(self)

    def make_initializable_iterator(self, shared_name=None):
        from tensorflux._src.data.iterator_ops import Iterator
        return Iterator._initializable(self, shared_name)

    # -- run-time hooks for the consumers ----------------------------------------------
    def _cardinality(self, ctx):
        """The number of elements one pass yields, INFINITE or UNKNOWN, computed as TF's
        kernels do without producing elements."""
        return UNKNOWN

    def _describe(self, ctx):
        """What identifies this node's elements for fingerprint and snapshot: its type,
        element structure and configuration (argument values; children and functions
        are added by `consumers.fingerprint_of`)."""
        parts = [type(self).__name__, repr(self._structure.element_spec)]
        for key, value in sorted(vars(self).items()):
            text = _config_text(ctx, value)
            if text is not None:
                parts.append(f"{key}={text}")
        return parts


class IterationContext:
    """What one initialization of an iterator gives the dataset nodes: the values of
    their tensor arguments, the bound functions, per-node pass counts and entropy."""

    def __init__(self, values, parent=None, entropy=None):
        self._values = values
        self._parent = parent
        self._bound = {} if parent is None else parent._bound
        self._passes = {} if parent is None else parent._passes
        self._memory = {} if parent is None else parent._memory
        self._closers = [] if parent is None else parent._closers
        self._local_bound = {}
        if parent is not None:
            entropy = parent.entropy
        self.entropy = secrets.randbits(62) if entropy is None else entropy

    def child(self, values):
        """A context for a dataset built inside a function (flat_map, interleave)."""
        return IterationContext(values, parent=self)

    def fed(self, key):
        """A value given to a child context by a non-tensor key (a function's dataset
        argument)."""
        if key in self._values:
            return self._values[key]
        if self._parent is not None:
            return self._parent.fed(key)
        raise KeyError(f"no value for {key!r} in this iterator's initialization")

    def value(self, arg):
        if not isinstance(arg, Tensor):
            return arg
        if arg in self._values:
            return self._values[arg]
        if self._parent is not None:
            return self._parent.value(arg)
        raise KeyError(f"no value for {arg.name} in this iterator's initialization")

    def int_arg(self, arg, name, minimum=None):
        """A scalar integer argument (Python or tensor) as an int, checked."""
        value = np.asarray(self.value(arg))
        if value.ndim != 0 or not np.issubdtype(value.dtype, np.integer):
            raise errors.InvalidArgumentError(
                None, None, f"{name} must be a scalar integer, got {value!r}")
        value = int(value)
        if minimum is not None and value < minimum:
            raise errors.InvalidArgumentError(
                None, None, f"{name} must be greater than or equal to {minimum}, got {value}")
        return value

    def function(self, structured):
        """The function bound to its captured values. One Session per function and
        initialization; inside a dataset made by a flat_map/interleave/group_by_window
        function, captured tensors of that function take this element's values (the
        bound function is then re-fed, not recompiled)."""
        bound = self._bound.get(structured)
        if bound is None:
            bound = structured.bind([self.value(t) for t in structured.captured])
            self._bound[structured] = bound
            self._closers.append(bound.close)
        if self._parent is None or not any(self._is_local(t) for t in structured.captured):
            return bound
        local = self._local_bound.get(structured)
        if local is None:
            local = self._local_bound[structured] = bound.rebind(
                [self.value(t) for t in structured.captured])
        return local

    def _is_local(self, tensor) -> bool:
        """Whether a child context (not the iterator's own values) gives `tensor`."""
        ctx = self
        while ctx._parent is not None:
            if tensor in ctx._values:
                return True
            ctx = ctx._parent
        return False

    def next_pass(self, node) -> int:
        """How many passes over `node` started before this one (0 for the first)."""
        count = self._passes.get(node, 0)
        self._passes[node] = count + 1
        return count

    def memory(self, node) -> dict:
        """A dict a node keeps for the life of this initialization (cache's record)."""
        return self._memory.setdefault(node, {})

    def on_close(self, closer):
        self._closers.append(closer)

    def close(self):
        closers, self._closers[:] = list(self._closers), []
        for closer in reversed(closers):
            closer()



class ElementError:
    """An element whose computation failed. Nodes pass it on in its place (a batch
    holding it fails as a whole); the iterator raises `error` for it and goes on with
    the next element, as TF's iterators do after an error (and ignore_errors drops it)."""

    __slots__ = ("error",)

    def __init__(self, error):
        self.error = error


def groups_of(elements, size, drop_remainder):
    """Lists of `size` consecutive elements; the shorter last one unless dropped. An
    ElementError comes out in place of the group it interrupted (whose elements are
    lost, as in TF's batch)."""
    group = []
    for element in elements:
        if type(element) is ElementError:
            group = []
            yield element
            continue
        group.append(element)
        if len(group) == size:
            yield group
            group = []
    if group and not drop_remainder:
        yield group


stack_batch = _structure.stack_batch


def _config_text(ctx, value):
    """A node attribute's value as text, for plain configuration (numbers, strings,
    arrays, tensors' values, sequences of them); None for anything else."""
    if isinstance(value, Tensor):
        value = ctx.value(value)
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return repr(value.tolist())
        return f"{value.dtype}{value.shape}{value.tobytes().hex()}"
    if value is None or isinstance(value, (bool, int, float, str, bytes, np.generic)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        parts = [_config_text(ctx, v) for v in value]
        return None if any(p is None for p in parts) else "[" + ",".join(parts) + "]"
    return None


def pass_rng(seeds, ctx, *extra):
    """Entropy for a random node: its (seed, seed2) when the user seeded the graph or the
    op (the stream is then reproducible), else fresh per iterator initialization."""
    seed, seed2 = seeds
    base = [ctx.entropy] if seed is None else [int(seed), int(seed2)]
    return np.random.default_rng(base + [int(e) for e in extra])
