"""Element-wise and ordering transformations: map, flat_map, interleave, filter,
shuffle, repeat, take, skip, shard.

A failed element (an ElementError) passes through each of them in its place; take,
skip and shard do not count it."""

from __future__ import annotations

import collections
import concurrent.futures
import itertools

from tensorflux._src.data.dataset_ops import (AUTOTUNE, INFINITE, UNKNOWN, Dataset,
                                              ElementError, groups_of, pass_rng)
from tensorflux._src.data.functions import StructuredFunction
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors, random_seed
from tensorflux._src.framework.operation import Tensor


SHARD_HINT = -1  # tf.data.experimental.SHARD_HINT


def _parallelism(num_parallel_calls):
    if num_parallel_calls is None:
        return 1
    if isinstance(num_parallel_calls, Tensor):
        raise TypeError("num_parallel_calls must be a Python integer or "
                        "tf.data.experimental.AUTOTUNE here, not a tensor")
    if num_parallel_calls == AUTOTUNE:
        return 2  # the machine's cores are few; XLA parallelizes inside each call too
    if num_parallel_calls < 1:
        raise ValueError(f"num_parallel_calls must be positive or AUTOTUNE, got "
                         f"{num_parallel_calls}")
    return int(num_parallel_calls)


class MapDataset(Dataset):
    """`map_func` applied to each element; with num_parallel_calls > 1 several elements
    are computed at once in threads, and the output order stays the input order.

    Followed by `batch` (TF fuses the two as well), a whole group of elements goes
    through the function at once: see `BoundFunction.call_batch`."""

    def __init__(self, input_dataset, map_func, num_parallel_calls=None):
        self._children = (input_dataset,)
        self._function = StructuredFunction(map_func, input_dataset._structure, "map")
        self._functions = (self._function,)
        self._structure = self._function.output_structure
        self._parallelism = _parallelism(num_parallel_calls)

    def _iterate(self, ctx):
        function = ctx.function(self._function)
        yield from self._in_order(ctx, _guarded(function), self._children[0]._iterate(ctx))

    def _iterate_batches(self, ctx, batch_size, drop_remainder):
        function = ctx.function(self._function)
        structure = self._structure

        def batch(group):
            values = function.call_batch(group)
            return tuple(structure.batch_component(v, i) for i, v in enumerate(values))

        groups = groups_of(self._children[0]._iterate(ctx), batch_size, drop_remainder)
        yield from self._in_order(ctx, _guarded(batch), groups)

    def _cardinality(self, ctx):
        return self._children[0]._cardinality(ctx)

    def _in_order(self, ctx, compute, items):
        """`compute(item)` for each item, up to `num_parallel_calls` at once, in order."""
        if self._parallelism == 1:
            for item in items:
                yield compute(item)
            return
        pool = concurrent.futures.ThreadPoolExecutor(self._parallelism,
                                                     thread_name_prefix="tf.data.map")
        ctx.on_close(lambda: pool.shutdown(wait=False, cancel_futures=True))
        pending = collections.deque()
        try:
            for item in items:
                pending.append(pool.submit(compute, item))
                if len(pending) >= 2 * self._parallelism:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()
            pool.shutdown(wait=False, cancel_futures=True)


def _guarded(compute):
    """`compute(item)`, with a failed computation (or a failed input, passed on) as an
    ElementError in place of its result."""
    def run(item):
        if type(item) is ElementError:
            return item
        try:
            return compute(item)
        except errors.OpError as exc:
            return ElementError(exc)
    return run


class FilterDataset(Dataset):
    """The elements for which `predicate` returns True."""

    def __init__(self, input_dataset, predicate):
        self._children = (input_dataset,)
        self._function = StructuredFunction(predicate, input_dataset._structure, "filter")
        specs = self._function.output_structure.specs
        if len(specs) != 1 or specs[0].dtype != _dtypes.bool or \
                not specs[0].shape.is_compatible_with([]):
            raise ValueError(f"`predicate` return type must be convertible to a scalar "
                             f"boolean tensor. Was {self._function.output_structure.describe()}.")
        self._functions = (self._function,)
        self._structure = input_dataset._structure

    def _iterate(self, ctx):
        predicate = _guarded(ctx.function(self._function))
        for element in self._children[0]._iterate(ctx):
            keep = predicate(element)
            if type(keep) is ElementError:
                yield keep
            elif bool(keep[0]):
                yield element


def _datasets(function, ctx, elements):
    """For each element: an iterator over the dataset `function` returns for it (a
    failed element or call: an iterator yielding just that error)."""
    bound = ctx.function(function)
    for element in elements:
        if type(element) is ElementError:
            yield iter((element,))
            continue
        try:
            values = bound.dataset_values(element)
        except errors.OpError as exc:
            yield iter((ElementError(exc),))
            continue
        yield function.dataset._iterate(ctx.child(values))


class FlatMapDataset(Dataset):
    def __init__(self, input_dataset, map_func):
        self._children = (input_dataset,)
        self._function = StructuredFunction(map_func, input_dataset._structure, "flat_map",
                                            returns_dataset=True)
        self._functions = (self._function,)
        self._tensor_args = self._function.outer_inputs
        self._structure = self._function.output_structure

    def _iterate(self, ctx):
        for inner in _datasets(self._function, ctx, self._children[0]._iterate(ctx)):
            yield from inner


class InterleaveDataset(Dataset):
    """Round robin over `cycle_length` datasets made from consecutive input elements,
    `block_length` elements from each in turn; an exhausted one is replaced by the next
    input element's dataset. The order is TF's deterministic one whatever
    num_parallel_calls says."""

    def __init__(self, input_dataset, map_func, cycle_length=AUTOTUNE, block_length=1,
                 num_parallel_calls=None):
        self._children = (input_dataset,)
        self._function = StructuredFunction(map_func, input_dataset._structure, "interleave",
                                            returns_dataset=True)
        self._functions = (self._function,)
        self._structure = self._function.output_structure
        self._cycle_length, self._block_length = cycle_length, block_length
        self._tensor_args = (cycle_length, block_length, *self._function.outer_inputs)
        _parallelism(num_parallel_calls)  # validated; elements are produced in order

    def _iterate(self, ctx):
        cycle_length = ctx.int_arg(self._cycle_length, "cycle_length")
        if cycle_length == AUTOTUNE:
            cycle_length = 2
        if cycle_length < 1:
            raise errors.InvalidArgumentError(None, None, f"cycle_length must be positive, "
                                                          f"got {cycle_length}")
        block_length = ctx.int_arg(self._block_length, "block_length", minimum=1)
        sources = _datasets(self._function, ctx, self._children[0]._iterate(ctx))
        cycle = list(itertools.islice(sources, cycle_length))
        index = 0
        while cycle:
            index %= len(cycle)
            for produced in range(block_length):
                element = next(cycle[index], None)
                if element is None:
                    break
                yield element
            else:
                index += 1
                continue
            # Exhausted: the slot's replacement starts when its turn comes round again.
            replacement = next(sources, None)
            if replacement is None:
                del cycle[index]
            else:
                cycle[index] = replacement
                index += 1


class ShuffleDataset(Dataset):
    """TF's shuffle: a buffer of `buffer_size` elements; each output is a uniformly
    chosen buffer entry, replaced by the next input element."""

    def __init__(self, input_dataset, buffer_size, seed=None, reshuffle_each_iteration=True):
        self._children = (input_dataset,)
        self._structure = input_dataset._structure
        self._buffer_size = buffer_size
        self._seeds = random_seed.get_seed(seed)
        self._seed_arg = seed
        self._tensor_args = (buffer_size, seed)
        self._reshuffle = reshuffle_each_iteration

    def _iterate(self, ctx):
        buffer_size = ctx.int_arg(self._buffer_size, "buffer_size", minimum=1)
        seeds = self._seeds
        if isinstance(self._seed_arg, Tensor):
            seeds = (int(ctx.value(self._seed_arg)), 0)
        epoch = ctx.next_pass(self)
        rng = pass_rng(seeds, ctx, epoch if self._reshuffle else 0)
        buffer = []
        for element in self._children[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            if len(buffer) < buffer_size:
                buffer.append(element)
                continue
            index = rng.integers(len(buffer))
            yield buffer[index]
            buffer[index] = element
        while buffer:
            index = rng.integers(len(buffer))
            buffer[index], buffer[-1] = buffer[-1], buffer[index]
            yield buffer.pop()

    def _cardinality(self, ctx):
        return self._children[0]._cardinality(ctx)


class RepeatDataset(Dataset):
    """`count` passes over the input (None or -1: forever)."""

    def __init__(self, input_dataset, count=None):
        self._children = (input_dataset,)
        self._structure = input_dataset._structure
        self._count = -1 if count is None else count
        self._tensor_args = (self._count,)

    def _iterate(self, ctx):
        count = ctx.int_arg(self._count, "count")
        done = 0
        while count < 0 or done < count:
            produced = False
            for element in self._children[0]._iterate(ctx):
                produced = True
                yield element
            done += 1
            if not produced:  # an empty input repeated forever is still empty
                return

    def _cardinality(self, ctx):
        count = ctx.int_arg(self._count, "count")
        n = self._children[0]._cardinality(ctx)
        if count == 0 or n == 0:
            return 0
        if n == UNKNOWN:
            return UNKNOWN
        return INFINITE if count < 0 or n == INFINITE else n * count


class _CountDataset(Dataset):
    """A transformation with one integer `count` argument over one input."""

    def __init__(self, input_dataset, count):
        self._children = (input_dataset,)
        self._structure = input_dataset._structure
        self._count = count
        self._tensor_args = (count,)


class TakeDataset(_CountDataset):
    """The first `count` elements (failed ones are passed on and not counted, as TF's
    take counts only elements it produced)."""

    def _iterate(self, ctx):
        count = ctx.int_arg(self._count, "count")
        if count == 0:
            return
        taken = 0
        for element in self._children[0]._iterate(ctx):
            yield element
            if type(element) is not ElementError:
                taken += 1
                if taken == count:
                    return

    def _cardinality(self, ctx):
        count = ctx.int_arg(self._count, "count")
        n = self._children[0]._cardinality(ctx)
        if count < 0:
            return n
        if n == INFINITE:
            return count
        return UNKNOWN if n == UNKNOWN else min(n, count)


class SkipDataset(_CountDataset):
    def _iterate(self, ctx):
        count = ctx.int_arg(self._count, "count")
        skipped = 0
        for element in self._children[0]._iterate(ctx):
            if count < 0:
                return  # -1 skips everything
            if type(element) is ElementError or skipped >= count:
                yield element
            else:
                skipped += 1

    def _cardinality(self, ctx):
        count = ctx.int_arg(self._count, "count")
        n = self._children[0]._cardinality(ctx)
        if n < 0:
            return n
        return 0 if count < 0 else max(n - count, 0)


class ShardDataset(Dataset):
    """Every `num_shards`-th element starting at `index` (one worker's share)."""

    def __init__(self, input_dataset, num_shards, index):
        self._children = (input_dataset,)
        self._structure = input_dataset._structure
        self._num_shards, self._index = num_shards, index
        self._tensor_args = (num_shards, index)
        if isinstance(num_shards, int) and isinstance(index, int) and \
                (num_shards, index) != (SHARD_HINT, SHARD_HINT):
            _check_shard(num_shards, index, ValueError)

    def _iterate(self, ctx):
        num_shards = ctx.int_arg(self._num_shards, "num_shards")
        index = ctx.int_arg(self._index, "index")
        if num_shards == SHARD_HINT:
            # Only a distribution strategy's auto-sharding replaces the hint.
            raise errors.FailedPreconditionError(
                None, None, "`tf.data.Dataset.shard(SHARD_HINT, ...)` can only be used in "
                "`tf.distribute.Strategy.experimental_distribute_dataset()` with "
                "`tf.data.experimental.AutoShardPolicy.HINT` policy, or tf.data service "
                "with `tf.data.experimental.service.ShardingPolicy.HINT` processing mode.")
        _check_shard(num_shards, index,
                     lambda message: errors.InvalidArgumentError(None, None, message))
        position = 0
        for element in self._children[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            if position % num_shards == index:
                yield element
            position += 1

    def _cardinality(self, ctx):
        num_shards = ctx.int_arg(self._num_shards, "num_shards")
        index = ctx.int_arg(self._index, "index")
        n = self._children[0]._cardinality(ctx)
        if n < 0:
            return n
        return n // num_shards + (1 if index < n % num_shards else 0)


def _check_shard(num_shards, index, error):
    if num_shards < 1:
        raise error(f"num_shards must be >= 1; got {num_shards}")
    if not 0 <= index < num_shards:
        raise error(f"index must be between 0 and {num_shards - 1}; got {index}")

