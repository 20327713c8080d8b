"""Checkpoint sharding callbacks (TF 2.15's `tf.train.experimental.ShardingCallback`,
`ShardableTensor`, `ShardByTaskPolicy`, `MaxShardSizePolicy`).

`Checkpoint.write/save(options=tf.train.CheckpointOptions(
experimental_sharding_callback=cb))` hands the checkpoint's tensors, as ShardableTensors
grouped by device task (job/replica/task of their device), to `cb` once per task; each
call returns a list of shards `{checkpoint_key: {slice_spec: tensor}}` and every shard
becomes one data file `<prefix>.data-0000k-of-0000n`. A tensor may come back cut into
slices (slice_spec: TF's `Variable.SaveSliceInfo.spec` string, "" for the whole
tensor); checkpoint_format stores slices so that restore reassembles the full tensor.

The tensors are graph tensors (a variable's `value()`, graph slices of it, a
PythonState's string), so a callback builds graph ops as TF's do in graph mode; the
writer then fetches the shards' values from the Session. After the callbacks,
`validate_shards` checks that nothing was added, removed, duplicated, reshaped, recast or
moved to another task (TF's RuntimeErrors). TF's check looks slice specs up exactly, so
it cannot follow a tensor cut into new slices; here new slices must instead tile the
tensor they were cut from, without overlap.
"""

from __future__ import annotations

import abc
import dataclasses
import inspect
import logging
import math
from collections.abc import Hashable

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.default_session import get_default_session
from tensorflux._src.framework.device import DeviceSpec
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import slicing_ops
from tensorflux._src.train.variables import Variable

__all__ = ["ShardableTensor", "ShardingCallback", "ShardByTaskPolicy", "MaxShardSizePolicy"]

_log = logging.getLogger("tensorflux")


@dataclasses.dataclass(frozen=True)
class ShardableTensor:
    """A checkpoint tensor as a sharding callback sees it."""

    _tensor_save_spec: object
    tensor: object
    dtype: object
    device: object
    name: str
    shape: object
    slice_spec: str
    checkpoint_key: str
    trackable: object

    def __hash__(self):
        return hash((self.name, self.dtype, str(self.device), self.checkpoint_key))

    def __repr__(self):
        fields = ("_tensor_save_spec", "tensor", "dtype", "device", "name", "shape",
                  "slice_spec", "checkpoint_key", "trackable")
        lines = [f"  {f}={getattr(self, f)!r}" for f in fields]
        return f"\n{type(self).__name__}:\n" + "\n".join(lines)


class ShardingCallback(abc.ABC):
    """Decides how a checkpoint's tensors are split into shards (data files).

    `__call__(shardable_tensors)` gets the ShardableTensors of one device task and
    returns a list of shards, each `{checkpoint_key: {slice_spec: tensor}}`. Tensors
    must not be removed, reshaped, recast or moved to another task, and one shard
    holds tensors of one task; this is checked after the callback runs.
    """

    @property
    @abc.abstractmethod
    def description(self):
        """A text description of the sharding policy."""

    @abc.abstractmethod
    def __call__(self, shardable_tensors):
        """Returns a list of shards for the given shardable tensors."""

    def __hash__(self):
        # As TF: callbacks with the same description and attribute values hash alike.
        value = hash(self.description)
        for name, attr in vars(self).items():
            if not (inspect.ismethod(attr) or inspect.isfunction(attr)):
                value ^= hash(name)
                if isinstance(attr, Hashable):
                    value ^= hash(attr)
        return value


class ShardByTaskPolicy(ShardingCallback):
    """Policy that splits tensors into shards based on their device spec task."""

    @property
    def description(self):
        return "Split tensors into shards based on their device spec task."

    def __call__(self, shardable_tensors):
        # The writer already calls the callback once per task: one shard per call.
        shard = {}
        for t in shardable_tensors:
            shard.setdefault(t.checkpoint_key, {})[t.slice_spec] = t.tensor
        return [shard]


class MaxShardSizePolicy(ShardingCallback):
    """Policy that splits tensors into shards with a max shard size.

    Shards may exceed the max shard size if they hold a single scalar or string tensor
    that cannot be sliced and exceeds it on its own.
    """

    class MaxShardSizePartitioner:
        """Fills shards of at most `max_shard_size` bytes in tensor order, cutting a
        tensor that does not fit the rest of the current shard into slices."""

        def get_shards(self, max_shard_size, shardable_tensors):
            """[{checkpoint_key: {slice_spec: tensor}}] for the tensors."""
            self.max_shard_size = max_shard_size
            self._shards = [{}]
            self._oversized = []  # single unsliceable tensors over the max, one per shard
            self._remaining = max_shard_size
            self._warned_strings = False
            for t in shardable_tensors:
                self._add_tensor(t)
            shards = list(self._shards) if self._shards[0] else []
            return shards + self._oversized

        def _new_shard(self):
            self._shards.append({})
            self._remaining = self.max_shard_size

        def _place(self, shards, spec, tensor):
            shards.setdefault(self._key, {})[spec] = tensor

        def _add_tensor(self, t):
            self._key, self._device, self._root = t.checkpoint_key, t.device, t.tensor
            shape = TensorShape(t.shape)
            if t.slice_spec:
                info = Variable.SaveSliceInfo.from_spec(t.slice_spec)
                self._full_shape = list(info.full_shape)
                self._root_shape, self._root_offset = list(info.var_shape), list(info.var_offset)
            elif shape.is_fully_defined():
                self._full_shape = self._root_shape = shape.as_list()
                self._root_offset = [0] * len(self._root_shape)
            else:
                self._full_shape = self._root_shape = self._root_offset = None
            self._item_size, total = self._sizes(t)
            if not self._root_shape:  # a scalar (or a shape unknown here): never sliced
                if total > self.max_shard_size:
                    _log.warning("Tensor %s is a %s scalar of size %s bytes and cannot be "
                                 "partitioned into a shard of max shard size %s bytes. It "
                                 "will be added as an individual shard that exceeds the max "
                                 "shard size.", self._key, t.dtype, total, self.max_shard_size)
                    self._oversized.append({self._key: {t.slice_spec: self._root}})
                    return
                if total > self._remaining:
                    self._new_shard()
                self._place(self._shards[-1], t.slice_spec, self._root)
                self._remaining -= total
                return
            self._offset = list(self._root_offset)
            self._shape = list(self._root_shape)
            size = total
            while size > self._remaining:
                axis, length = self._next_partition()
                if length == 0:
                    if self._remaining == self.max_shard_size:
                        # Not even one slice fits an empty shard (TF would loop forever
                        # here): the thinnest slice goes alone into an oversized shard.
                        axis = int(np.argmax(self._shape))
                        self._add_partition(axis, 1)
                    else:
                        self._new_shard()  # retry with a full shard
                else:
                    self._add_partition(axis, length)
                size = math.prod(self._shape) * self._item_size
            if math.prod(self._shape) > 0 or total == 0 and self._offset == self._root_offset:
                # The rest of the tensor (a zero-size tensor is kept whole, where TF
                # drops it, so that restore finds it).
                self._place(self._shards[-1], self._spec(self._offset, self._shape),
                            self._slice(self._offset, self._shape))
            self._remaining -= size

        def _sizes(self, t):
            """(bytes per element, total bytes) of the tensor or its slice."""
            dtype = _dtypes.as_dtype(t.dtype)
            count = math.prod(self._root_shape) if self._root_shape is not None else 0
            if dtype == _dtypes.variant or self._root_shape is None:
                return 0, 0  # sizes unknown here: counted as 0 (TF does for variants)
            if dtype != _dtypes.string:
                return dtype.size, count * dtype.size
            session = get_default_session()
            if session is None:
                if not self._warned_strings:
                    _log.warning("The checkpoint sharding policy is being executed without "
                                 "a default Session. The size of the string tensor cannot "
                                 "be obtained.")
                    self._warned_strings = True
                return 0, 0
            value = np.asarray(session.run(self._root), dtype=object)
            lengths = [len(s) for s in value.reshape(-1)]
            return max(lengths, default=0), sum(lengths)

        def _next_partition(self):
            """(axis, length) of the largest slab of the working tensor that fits the
            rest of the shard: the axis needing the fewest parts (TF's rule)."""
            count = math.prod(self._shape)

            def parts(axis):
                per_slab = count // self._shape[axis] * self._item_size
                slabs = self._remaining // per_slab
                return math.inf if slabs == 0 else math.ceil(self._shape[axis] / slabs)

            best_axis, best_parts = 0, parts(0)
            for axis in range(1, len(self._shape)):
                n = parts(axis)
                if n < best_parts and count * self._item_size / n <= self._remaining:
                    best_axis, best_parts = axis, n
            return best_axis, math.ceil(self._shape[best_axis] / best_parts)

        def _add_partition(self, axis, length):
            """Puts the first `length` entries along `axis` of the working tensor into
            the current shard (or an oversized one of its own)."""
            shape = list(self._shape)
            shape[axis] = length
            nbytes = math.prod(shape) * self._item_size
            spec = self._spec(self._offset, shape)
            part = self._slice(self._offset, shape)
            if nbytes > self.max_shard_size:
                _log.warning("Tensor %s's minimum slice %s has size %s bytes and cannot be "
                             "partitioned into a shard of max shard size %s bytes. It will "
                             "be added as an individual shard that exceeds the max shard "
                             "size.", self._key, spec, nbytes, self.max_shard_size)
                self._oversized.append({self._key: {spec: part}})
            elif nbytes > self._remaining:
                raise RuntimeError(f"Slice size ({nbytes} bytes) is larger than the remaining "
                                   f"shard size ({self._remaining} bytes). This should have "
                                   f"been caught in MaxShardSizePolicy._add_partition().")
            else:
                self._place(self._shards[-1], spec, part)
                self._remaining -= nbytes
                if self._remaining == 0:
                    self._new_shard()
            self._offset[axis] += length
            self._shape[axis] -= length

        def _spec(self, offset, shape):
            return Variable.SaveSliceInfo(full_name=self._key, full_shape=self._full_shape,
                                          var_offset=offset, var_shape=shape).spec.strip()

        def _slice(self, offset, shape):
            """The graph slice of the root tensor at (full-tensor) `offset`; the root
            itself when the slice is all of it."""
            begin = [o - r for o, r in zip(offset, self._root_offset)]
            if list(shape) == list(self._root_shape):
                return self._root
            with _graph.device(self._device):
                return slicing_ops.slice(self._root, begin, list(shape))

    def __init__(self, max_shard_size):
        self.max_shard_size = max_shard_size

    @property
    def description(self):
        return "Split tensors into shards with a max shard size."

    def __call__(self, shardable_tensors):
        return self.MaxShardSizePartitioner().get_shards(self.max_shard_size,
                                                         shardable_tensors)


# -- validation --------------------------------------------------------------------------------
def _task(device):
    return DeviceSpec.from_string(device or "").task


def _shape_of(tensor):
    return TensorShape(tensor.shape)


def _where(description, key, spec):
    return (f"  callback_description: {description}\n  checkpoint_key: {key}\n"
            f"  slice_spec: {spec}\n")


def _region(spec, shape):
    """(offset, shape) a slice spec covers within its full tensor ("" = all of `shape`)."""
    if not spec:
        return [0] * len(shape), list(shape)
    info = Variable.SaveSliceInfo.from_spec(spec)
    return list(info.var_offset), list(info.var_shape)


def _inside(inner, outer):
    (io, ishape), (oo, oshape) = inner, outer
    return len(io) == len(oo) and all(
        o <= i and i + n <= o + m for i, n, o, m in zip(io, ishape, oo, oshape))


def _overlap(a, b):
    return all(ao < bo + bn and bo < ao + an for ao, an, bo, bn in zip(a[0], a[1], b[0], b[1]))


def validate_shards(shards, shardable_tensors, callback_description):
    """Raises TF's RuntimeError when the callback's `shards` lost, added, duplicated,
    reshaped, recast or moved a tensor of `shardable_tensors`, or mixed tasks in a shard;
    returns [[(checkpoint_key, slice_spec, tensor)]] per shard."""
    d = callback_description
    originals = {}  # key -> {spec: ShardableTensor}
    for t in shardable_tensors:
        originals.setdefault(t.checkpoint_key, {})[t.slice_spec.strip()] = t
    # (key, original spec) -> [(region, spec)] of the callback's tensors taken from it
    pieces = {}
    seen = set()
    out = []
    for shard in shards:
        first = None  # (key, spec, task) of the shard's first tensor
        items = []
        for key, slices in shard.items():
            for spec, tensor in slices.items():
                spec = spec.strip()
                if (key, spec) in seen:
                    raise RuntimeError("After executing the checkpoint sharding callback, "
                                       "multiple tensors with the same checkpoint key and "
                                       "slice spec were found:\n" + _where(d, key, spec))
                seen.add((key, spec))
                if key not in originals:
                    raise RuntimeError("After executing the checkpoint sharding callback, a "
                                       "tensor not originally in the object graph was found "
                                       "in the checkpoint shards:\n" + _where(d, key, spec))
                if not isinstance(tensor, Tensor):
                    raise TypeError(f"The checkpoint sharding callback must return Tensors; "
                                    f"got {type(tensor).__name__} for {key!r} (slice spec "
                                    f"{spec!r}).")
                source, region = _source(originals[key], spec)
                if source is None:
                    raise RuntimeError("After executing the checkpoint sharding callback, a "
                                       "tensor not originally in the object graph was found "
                                       "in the checkpoint shards:\n" + _where(d, key, spec))
                original = originals[key][source]
                target = TensorShape(region[1]) if spec != source else _shape_of(original)
                if _shape_of(tensor).as_tuple_or_none() != target.as_tuple_or_none():
                    raise RuntimeError("After executing the checkpoint sharding callback, a "
                                       "tensor was found with an altered shape:\n"
                                       + _where(d, key, spec)
                                       + f"  original tensor_shape: {target}\n"
                                       f"  new tensor_shape: {_shape_of(tensor)}\n")
                if _dtypes.as_dtype(tensor.dtype) != _dtypes.as_dtype(original.dtype):
                    raise RuntimeError("After executing the checkpoint sharding callback, a "
                                       "tensor was found with an altered dtype:\n"
                                       + _where(d, key, spec)
                                       + f"  original tensor_dtype: {original.dtype}\n"
                                       f"  new tensor_dtype: {tensor.dtype}\n")
                task, original_task = _task(tensor.device), _task(str(original.device))
                if task != original_task:
                    raise RuntimeError("After executing the checkpoint sharding callback, a "
                                       "tensor was found with an altered task:\n"
                                       + _where(d, key, spec)
                                       + f"  original tensor_task: {original_task}\n"
                                       f"  new tensor_task: {task}\n")
                if first is None:
                    first = (key, spec, task)
                elif first[2] is not None and task is not None and first[2] != task:
                    raise RuntimeError(
                        "After executing the checkpoint sharding callback, tensors with "
                        "different tasks were found in the same shard:\n"
                        f"  callback_description: {d}\n"
                        f"  tensor #1:    checkpoint_key: {first[0]}\n"
                        f"    slice_spec: {first[1]}\n    task: {first[2]}\n"
                        f"  tensor #2:    checkpoint_key: {key}\n"
                        f"    slice_spec: {spec}\n    task: {task}\n")
                for other_region, other_spec in pieces.get((key, source), ()):
                    if _overlap(region, other_region):
                        raise RuntimeError(
                            "After executing the checkpoint sharding callback, tensor slices "
                            "with the same checkpoint key overlap:\n" + _where(d, key, spec)
                            + f"  overlapping slice_spec: {other_spec}\n")
                pieces.setdefault((key, source), []).append((region, spec))
                items.append((key, spec, tensor))
        out.append(items)
    missing = []
    for key, by_spec in originals.items():
        for spec, original in by_spec.items():
            taken = pieces.get((key, spec), [])
            shape = _shape_of(original)
            if shape.is_fully_defined():
                # Slices inside the original that do not overlap tile it when their
                # sizes add up to its size.
                size = math.prod(_region(spec, shape.as_list())[1])
                whole = bool(taken) and sum(math.prod(r[1]) for r, _ in taken) == size
            else:
                whole = any(s == spec for _, s in taken)
            if not whole:
                missing.append(f"  tensor:\n    checkpoint_key: {key}\n"
                               f"    slice_spec: {spec}\n")
    if missing:
        raise RuntimeError("After executing the checkpoint sharding callback, tensors in the "
                           "object graph were not found in the checkpoint shards:\n"
                           f"  callback_description: {d}\n" + "".join(missing))
    return out


def _source(by_spec, spec):
    """(original slice spec, region of `spec`) for the original tensor `spec` was cut
    from; (None, None) when it lies in none of them."""
    if spec in by_spec:
        original = by_spec[spec]
        return spec, _region(spec, _shape_of(original).as_list())
    try:
        region = _region(spec, [])
    except ValueError:
        return None, None
    full = Variable.SaveSliceInfo.from_spec(spec).full_shape
    for source, original in by_spec.items():
        shape = _shape_of(original)
        if not shape.is_fully_defined():
            continue
        outer = _region(source, shape.as_list())
        source_full = (Variable.SaveSliceInfo.from_spec(source).full_shape if source
                       else shape.as_list())
        if full == source_full and _inside(region, outer):
            return source, region
    return None, None


# -- the writer's side -------------------------------------------------------------------------
def task_of(device):
    """TF's grouping key for a device: its job, replica and task (on that task's CPU)."""
    spec = DeviceSpec.from_string(str(device or ""))
    return DeviceSpec(job=spec.job, replica=spec.replica, task=spec.task, device_type="CPU",
                      device_index=0)


def shard(callback, shardable_tensors):
    """Calls `callback` once per device task and validates the result: a list of shards,
    each [(checkpoint_key, slice_spec, tensor)]."""
    by_task = {}
    for t in shardable_tensors:
        by_task.setdefault(task_of(t.device), []).append(t)
    shards = []
    for group in by_task.values():
        shards.extend(callback(group))
    return validate_shards(shards, shardable_tensors, callback.description)
