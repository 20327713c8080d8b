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
from tensorflux._src.framework import errors
from tensorflux._src.framework.operation import Tensor

AUTOTUNE = -1


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
            yield tuple(stack_batch([e[i] for e in group], i) for i in range(len(group[0])))

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
        raise RuntimeError("In TF1 graph mode a Dataset is iterated through an iterator: "
                           "use dataset.make_one_shot_iterator().get_next() in a Session")

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
    def from_generator(generator, output_types, output_shapes=None, args=None):
        from tensorflux._src.data.sources import GeneratorDataset
        return GeneratorDataset(generator, output_types, output_shapes, args)

    @staticmethod
    def range(*args):
        from tensorflux._src.data.sources import RangeDataset
        return RangeDataset(*args)

    @staticmethod
    def zip(datasets):
        from tensorflux._src.data.sources import ZipDataset
        return ZipDataset(datasets)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        from tensorflux._src.data.readers import list_files
        return list_files(file_pattern, shuffle, seed)

    def concatenate(self, dataset):
        from tensorflux._src.data.sources import ConcatenateDataset
        return ConcatenateDataset(self, dataset)

    # -- transformations -------------------------------------------------------------
    def map(self, map_func, num_parallel_calls=None):
        from tensorflux._src.data.transformations import MapDataset
        return MapDataset(self, map_func, num_parallel_calls)

    def flat_map(self, map_func):
        from tensorflux._src.data.transformations import FlatMapDataset
        return FlatMapDataset(self, map_func)

    def interleave(self, map_func, cycle_length=AUTOTUNE, block_length=1,
                   num_parallel_calls=None):
        from tensorflux._src.data.transformations import InterleaveDataset
        return InterleaveDataset(self, map_func, cycle_length, block_length,
                                 num_parallel_calls)

    def filter(self, predicate):
        from tensorflux._src.data.transformations import FilterDataset
        return FilterDataset(self, predicate)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None):
        from tensorflux._src.data.transformations import ShuffleDataset
        return ShuffleDataset(self, buffer_size, seed,
                              True if reshuffle_each_iteration is None
                              else reshuffle_each_iteration)

    def batch(self, batch_size, drop_remainder=False):
        from tensorflux._src.data.batching import BatchDataset
        return BatchDataset(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size, padded_shapes, padding_values=None,
                     drop_remainder=False):
        from tensorflux._src.data.batching import PaddedBatchDataset
        return PaddedBatchDataset(self, batch_size, padded_shapes, padding_values,
                                  drop_remainder)

    def unbatch(self):
        from tensorflux._src.data.batching import UnbatchDataset
        return UnbatchDataset(self)

    def repeat(self, count=None):
        from tensorflux._src.data.transformations import RepeatDataset
        return RepeatDataset(self, count)

    def take(self, count):
        from tensorflux._src.data.transformations import TakeDataset
        return TakeDataset(self, count)

    def skip(self, count):
        from tensorflux._src.data.transformations import SkipDataset
        return SkipDataset(self, count)

    def shard(self, num_shards, index):
        from tensorflux._src.data.transformations import ShardDataset
        return ShardDataset(self, num_shards, index)

    def prefetch(self, buffer_size):
        from tensorflux._src.data.prefetch import PrefetchDataset
        return PrefetchDataset(self, buffer_size)

    def cache(self, filename=""):
        from tensorflux._src.data.cache import CacheDataset
        return CacheDataset(self, filename)

    def apply(self, transformation_func):
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError(f"`transformation_func` must return a Dataset, got "
                            f"{type(result).__name__}")
        return result

    # -- iterators ---------------------------------------------------------------------
    def make_one_shot_iterator(self):
        from tensorflux._src.data.iterator_ops import Iterator
        return Iterator._one_shot(self)

    def make_initializable_iterator(self, shared_name=None):
        from tensorflux._src.data.iterator_ops import Iterator
        return Iterator._initializable(self, shared_name)


class IterationContext:
    """What one initialization of an iterator gives the dataset nodes: the values of
    their tensor arguments, the bound functions, per-node pass counts and entropy."""

    def __init__(self, values, parent=None):
        self._values = values
        self._parent = parent
        self._bound = {} if parent is None else parent._bound
        self._passes = {} if parent is None else parent._passes
        self._memory = {} if parent is None else parent._memory
        self._closers = [] if parent is None else parent._closers
        self.entropy = secrets.randbits(62) if parent is None else parent.entropy

    def child(self, values):
        """A context for a dataset built inside a function (flat_map, interleave)."""
        return IterationContext(values, parent=self)

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
        bound = self._bound.get(structured)
        if bound is None:
            bound = structured.bind([self.value(t) for t in structured.captured])
            self._bound[structured] = bound
            self._closers.append(bound.close)
        return bound

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



def groups_of(elements, size, drop_remainder):
    """Lists of `size` consecutive elements; the shorter last one unless dropped."""
    group = []
    for element in elements:
        group.append(element)
        if len(group) == size:
            yield group
            group = []
    if group and not drop_remainder:
        yield group


def stack_batch(values, component):
    """One component of a batch: the elements' values stacked (already stacked: as is)."""
    if isinstance(values, np.ndarray):
        return values
    first = np.shape(values[0])
    for position, value in enumerate(values):
        if np.shape(value) != first:
            raise errors.InvalidArgumentError(
                None, None, f"Cannot batch tensors with different shapes in component "
                f"{component}. First element had shape {list(first)} and element {position} "
                f"had shape {list(np.shape(value))}.")
    return np.stack(values)


def pass_rng(seeds, ctx, *extra):
    """Entropy for a random node: its (seed, seed2) when the user seeded the graph or the
    op (the stream is then reproducible), else fresh per iterator initialization."""
    seed, seed2 = seeds
    base = [ctx.entropy] if seed is None else [int(seed), int(seed2)]
    return np.random.default_rng(base + [int(e) for e in extra])
