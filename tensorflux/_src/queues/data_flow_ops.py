"""`tf.QueueBase`, `tf.FIFOQueue`, `tf.RandomShuffleQueue`, `tf.PaddingFIFOQueue`.

The Python side of TF1's queues: argument checks, static shapes and TF's op names
(`fifo_queue_enqueue`, `fifo_queue_Dequeue`, `fifo_queue_DequeueMany`, ...). The queue
itself lives in the Session that runs these ops (queue_state.py, queue_ops.py).
"""

from __future__ import annotations

import functools

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import random_seed
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.shape_fns import static_value
from tensorflux._src.queues import queue_ops  # noqa: F401  (registers the ops)

__all__ = ["QueueBase", "FIFOQueue", "RandomShuffleQueue", "PaddingFIFOQueue",
           "PriorityQueue"]


def _as_type_list(dtypes):
    if isinstance(dtypes, (_dtypes.DType, str)) or not isinstance(dtypes, (list, tuple)):
        return [_dtypes.as_dtype(dtypes)]
    return [_dtypes.as_dtype(d) for d in dtypes]


def _as_shape_list(shapes, partial_allowed=False):
    """TF's rules: None (unspecified), one shape, or one shape per component."""
    if partial_allowed and (not isinstance(shapes, (list, tuple)) or not shapes or
                            any(s is None or isinstance(s, int) for s in shapes)):
        raise ValueError("When providing partial shapes, a list of shapes must be provided.")
    if shapes is None:
        return None
    if isinstance(shapes, tensor_shape.TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, (list, tuple)):
        raise TypeError("shapes must be a TensorShape or a list or tuple of TensorShapes.")
    if all(s is None or isinstance(s, int) for s in shapes):
        shapes = [shapes]  # a single shape
    shapes = [tensor_shape.as_shape(s) for s in shapes]
    if not partial_allowed and any(not s.is_fully_defined() for s in shapes):
        raise ValueError(f"All shapes must be fully defined: {shapes}")
    if any(s.ndims is None for s in shapes):
        raise ValueError(f"All shapes must have a defined rank: {shapes}")
    return shapes


def _as_name_list(names, dtypes):
    if names is None:
        return None
    if not isinstance(names, (list, tuple)):
        names = [names]
    if len(names) != len(dtypes):
        raise ValueError("List of names must have the same length as the list of dtypes")
    return list(names)


def _create_queue(op_type, name, dtypes, shapes, shared_name, **attrs):
    # Queues are created outside any control-dependency context, as TF's init_scope does.
    with _graph.get_default_graph().control_dependencies(None):
        ref = apply_op(op_type, name=name, component_types=tuple(dtypes),
                       shapes=tuple(shapes or ()), shared_name=shared_name or "", **attrs)
    ref.op._attrs["node_name"] = ref.op.name  # the resource's default name ("_0_<name>")
    return ref


def _shape_common(s1, s2):
    """The most specific shape compatible with both (unknown where they differ)."""
    s1, s2 = tensor_shape.TensorShape(s1), tensor_shape.TensorShape(s2)
    if s1.ndims is None or s2.ndims is None or s1.ndims != s2.ndims:
        return tensor_shape.unknown_shape()
    return tensor_shape.TensorShape([d1 if d1.value is not None and d1.value == d2.value
                                     else None for d1, d2 in zip(s1.dims, s2.dims)])


class QueueBase:
    """What every queue can do; subclasses only build the queue op."""

    def __init__(self, dtypes, shapes, names, queue_ref):
        self._dtypes = dtypes
        if shapes is not None:
            if len(shapes) != len(dtypes):
                raise ValueError("Queue shapes must have the same length as dtypes")
            self._shapes = [tensor_shape.TensorShape(s) for s in shapes]
        else:
            self._shapes = [tensor_shape.unknown_shape() for _ in dtypes]
        if names is not None:
            if len(names) != len(dtypes):
                raise ValueError("Queue names must have the same length as dtypes")
        self._names = names
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    @staticmethod
    def from_list(index, queues):
        """A queue whose ops act on `queues[index]` (`index` an int32 scalar tensor): the
        handles stacked and gathered, as TF does."""
        from tensorflux._src.ops.array import array_ops, gather_ops
        if not queues or not isinstance(queues, list) or not all(
                isinstance(q, QueueBase) for q in queues):
            raise TypeError("A list of queues expected")
        dtypes = queues[0].dtypes
        if not all(dtypes == q.dtypes for q in queues[1:]):
            raise TypeError("Queues do not have matching component dtypes.")
        names = queues[0].names
        if not all(names == q.names for q in queues[1:]):
            raise TypeError("Queues do not have matching component names.")
        shapes = [functools.reduce(_shape_common, s)
                  for s in zip(*[q.shapes for q in queues])]
        refs = array_ops.stack([q.queue_ref for q in queues])
        selected = gather_ops.gather(refs, index)
        return QueueBase(dtypes=dtypes, shapes=shapes, names=names, queue_ref=selected)

    # -- properties ----------------------------------------------------------------------
    @property
    def queue_ref(self):
        return self._queue_ref

    @property
    def name(self):
        return self._queue_ref.op.name

    @property
    def dtypes(self):
        return self._dtypes

    @property
    def shapes(self):
        return self._shapes

    @property
    def names(self):
        return self._names

    # -- enqueue -------------------------------------------------------------------------
    def _check_enqueue_dtypes(self, vals):
        """`vals` as a list of tensors in component order, converted to the dtypes."""
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names, key=str) != sorted(vals.keys(), key=str):
                raise ValueError(f"Keys in dictionary to enqueue do not match names of Queue. "
                                 f"Dictionary: {sorted(vals.keys())}, Queue: "
                                 f"{sorted(self._names)}")
            vals = [vals[k] for k in self._names]
        else:
            if self._names:
                raise ValueError("You must enqueue a dictionary in a Queue with names")
            if not isinstance(vals, (list, tuple)):
                vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"Expected {len(self._dtypes)} elements to enqueue, got "
                             f"{len(vals)}")
        return [convert_to_tensor(v, dtype=dtype, name=f"component_{i}")
                for i, (v, dtype) in enumerate(zip(vals, self._dtypes))]

    def enqueue(self, vals, name=None):
        """An op adding one element (a tensor, list/tuple of tensors, or dict by name)."""
        with _graph.name_scope(name or f"{self._name}_enqueue") as scope:
            vals = self._check_enqueue_dtypes(vals)
            for val, shape in zip(vals, self._shapes):
                val.shape.assert_is_compatible_with(shape)
            return apply_op("QueueEnqueueV2", name=scope, handle=self._queue_ref,
                            components=vals)

    def enqueue_many(self, vals, name=None):
        """An op adding the slices along dimension 0 of `vals` as elements."""
        with _graph.name_scope(name or f"{self._name}_EnqueueMany") as scope:
            vals = self._check_enqueue_dtypes(vals)
            batch_dim = tensor_shape.Dimension(None)
            for val, shape in zip(vals, self._shapes):
                val_shape = val.shape.with_rank_at_least(1)
                batch_dim = batch_dim.merge_with(val_shape[0])
                val_shape[1:].assert_is_compatible_with(shape)
            return apply_op("QueueEnqueueManyV2", name=scope, handle=self._queue_ref,
                            components=vals)

    # -- dequeue -------------------------------------------------------------------------
    def _return_value(self, tensors):
        if self._names:
            return {n: tensors[i] for i, n in enumerate(self._names)}
        if len(tensors) == 1:
            return tensors[0]
        return tensors

    def dequeue(self, name=None):
        """One element; the run blocks until there is one (or the queue is closed)."""
        outs = apply_op("QueueDequeueV2", name=name or f"{self._name}_Dequeue",
                        handle=self._queue_ref, component_types=tuple(self._dtypes))
        for t, shape in zip(outs, self._shapes):
            t.set_shape(shape)
        return self._return_value(outs)

    def _dequeue_n(self, op_type, n, name, default_name, batch_dim):
        outs = apply_op(op_type, name=name or f"{self._name}_{default_name}",
                        handle=self._queue_ref, n=n, component_types=tuple(self._dtypes))
        for t, shape in zip(outs, self._shapes):
            t.set_shape(tensor_shape.TensorShape([batch_dim]).concatenate(shape))
        return self._return_value(outs)

    def dequeue_many(self, n, name=None):
        """`n` elements stacked along a new dimension 0; blocks until there are n."""
        value = static_value(n) if isinstance(n, Tensor) else n
        batch_dim = int(value) if value is not None else None
        return self._dequeue_n("QueueDequeueManyV2", n, name, "DequeueMany", batch_dim)

    def dequeue_up_to(self, n, name=None):
        """Like dequeue_many, but a closed queue gives what it has left (at least 1)."""
        return self._dequeue_n("QueueDequeueUpToV2", n, name, "DequeueUpTo", None)

    # -- closing and inspecting ----------------------------------------------------------
    def close(self, cancel_pending_enqueues=False, name=None):
        """An op closing the queue: later enqueues fail, dequeues drain what is left."""
        return apply_op("QueueCloseV2", name=name or f"{self._name}_Close",
                        handle=self._queue_ref,
                        cancel_pending_enqueues=bool(cancel_pending_enqueues))

    def is_closed(self, name=None):
        return apply_op("QueueIsClosedV2", name=name or f"{self._name}_IsClosed",
                        handle=self._queue_ref)

    def size(self, name=None):
        return apply_op("QueueSizeV2", name=name or f"{self._name}_Size",
                        handle=self._queue_ref)


class FIFOQueue(QueueBase):
    """First in, first out. Shapes, if given, must be fully defined."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes)
        names = _as_name_list(names, dtypes)
        ref = _create_queue("FIFOQueueV2", name, dtypes, shapes, shared_name,
                            capacity=int(capacity))
        super().__init__(dtypes, shapes, names, ref)


class PaddingFIFOQueue(QueueBase):
    """FIFO whose shapes may have unknown dims; dequeue_many pads to the batch's largest."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name="padding_fifo_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, partial_allowed=True)
        names = _as_name_list(names, dtypes)
        if len(dtypes) != len(shapes):
            raise ValueError(f"Shapes must be provided for all components, but received "
                             f"{len(dtypes)} dtypes and {len(shapes)} shapes.")
        ref = _create_queue("PaddingFIFOQueueV2", name, dtypes, shapes, shared_name,
                            capacity=int(capacity))
        super().__init__(dtypes, shapes, names, ref)


class RandomShuffleQueue(QueueBase):
    """Dequeues elements in random order, keeping at least `min_after_dequeue` (until
    closed) so that the order mixes."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None,
                 seed=None, shared_name=None, name="random_shuffle_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes)
        names = _as_name_list(names, dtypes)
        seed1, seed2 = random_seed.get_seed(seed)
        if seed1 is None and seed2 is None:
            seed1, seed2 = 0, 0
        elif seed is None and shared_name is not None:
            seed2 = sum(ord(c) * 31 ** i for i, c in enumerate(shared_name)) % (2**31 - 1)
        ref = _create_queue("RandomShuffleQueueV2", name, dtypes, shapes, shared_name,
                            capacity=int(capacity), min_after_dequeue=int(min_after_dequeue),
                            seed=int(seed1 or 0), seed2=int(seed2 or 0))
        super().__init__(dtypes, shapes, names, ref)


class PriorityQueue(QueueBase):
    """Dequeues the element with the smallest priority first. Elements are
    `(priority, *components)`: an int64 scalar, then components of `types`."""

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None,
                 name="priority_queue"):
        types = _as_type_list(types)
        shapes = _as_shape_list(shapes)
        ref = _create_queue("PriorityQueueV2", name, types, shapes, shared_name,
                            capacity=int(capacity))
        priority_dtypes = [_dtypes.int64] + types
        priority_shapes = [()] + shapes if shapes else shapes
        super().__init__(priority_dtypes, priority_shapes, names, ref)
