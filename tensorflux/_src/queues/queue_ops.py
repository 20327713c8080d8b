"""Queue ops (host records, TF's names): FIFOQueueV2, RandomShuffleQueueV2,
PaddingFIFOQueueV2, PriorityQueueV2 create a queue; QueueEnqueueV2, QueueEnqueueManyV2,
QueueDequeueV2, QueueDequeueManyV2, QueueDequeueUpToV2, QueueCloseV2, QueueSizeV2,
QueueIsClosedV2 use it.

A queue is a resource of the Session that runs it (two Sessions have independent
queues). The creating op returns a resource handle: the queue's key in the Session's
`Resources`, which is `shared_name` if given, else the op's name. Like TF, a queue
created without a shared name is called `_<n>_<op name>` in messages, n counting the
resources this Session created ("FIFOQueue '_0_fifo_queue' is closed ...").
Session.close cancels every queue, so ops blocked in other threads end with
CancelledError.
"""

from __future__ import annotations

import threading

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.registry import REQUIRED, OpDef, register
from tensorflux._src.queues import queue_state

_KEY = "__queues_and_readers__"
_create_lock = threading.Lock()


class Resources:
    """The queues and readers of one Session, by key; closing it cancels the queues."""

    def __init__(self):
        self.lock = threading.Lock()
        self.by_key = {}
        self._next_id = 0

    def get_or_create(self, key, node_name, shared_name, make):
        with self.lock:
            resource = self.by_key.get(key)
            if resource is None:
                name = shared_name or f"_{self._next_id}_{node_name}"
                self._next_id += 1
                resource = self.by_key[key] = make(name)
            return resource

    def close(self):
        with self.lock:
            resources = list(self.by_key.values())
        for resource in resources:
            if hasattr(resource, "cancel"):
                resource.cancel()


def session_resources(session_state):
    """The Session's `Resources`; CancelledError once the Session is closed."""
    resources = session_state.resources.get(_KEY)
    if resources is None:
        with _create_lock:
            resources = session_state.resources.setdefault(_KEY, Resources())
    if getattr(session_state, "closed", False):  # checked after registering (see close)
        resources.close()
        raise errors.CancelledError(None, None, "Session has been closed.")
    return resources


def resource_key(shared_name, node_name):
    """A resource's key, which its handle carries: one per shared name or per op."""
    return f"shared:{shared_name}" if shared_name else f"node:{node_name}"


def handle_value(key):
    return np.array(key, dtype=object)


def lookup(handle, session_state):
    """The resource a handle names (created by its op earlier in this run)."""
    key = handle.item() if hasattr(handle, "item") else handle
    resource = session_resources(session_state).by_key.get(key)
    if resource is None:
        raise errors.NotFoundError(None, None, f"Resource {key} does not exist.")
    return resource


def _shapes(shapes):
    if not shapes:
        return None
    return [tuple(TensorShape(s).as_list()) for s in shapes]


def _np_types(component_types):
    return [_dtypes.as_dtype(t).as_numpy_dtype for t in component_types]


def _creator(make_queue):
    def create(*, component_types, shapes, capacity, shared_name, node_name,
               session_state, **extra):
        key = resource_key(shared_name, node_name)
        queue = session_resources(session_state).get_or_create(
            key, node_name, shared_name,
            lambda name: make_queue(name, capacity, _np_types(component_types),
                                    _shapes(shapes), **extra))
        if type(queue).kind != make_queue.kind:
            raise errors.InvalidArgumentError(
                None, None, f"Shared queue '{queue.name}' has type '{queue.kind}' that does "
                f"not match type of Node '{node_name}'")
        return handle_value(key)
    return create


_create_fifo = _creator(queue_state.Queue)
_create_padding = _creator(queue_state.PaddingFIFOQueue)
_create_priority_queue = _creator(queue_state.PriorityQueue)


def _create_priority(*, component_types, shapes, capacity, shared_name, node_name,
                     session_state):
    # The queue holds the int64 priority as component 0, then the given components.
    return _create_priority_queue(
        component_types=(_dtypes.int64,) + tuple(component_types),
        shapes=((),) + tuple(shapes) if shapes else (), capacity=capacity,
        shared_name=shared_name, node_name=node_name, session_state=session_state)


def _create_shuffle(*, component_types, shapes, capacity, min_after_dequeue, seed, seed2,
                    shared_name, node_name, session_state):
    return _creator(queue_state.RandomShuffleQueue)(
        component_types=component_types, shapes=shapes, capacity=capacity,
        shared_name=shared_name, node_name=node_name, session_state=session_state,
        min_after_dequeue=min_after_dequeue, seed=seed, seed2=seed2)


_QUEUE_ATTRS = {"component_types": REQUIRED, "shapes": (), "capacity": -1, "container": "",
                "shared_name": "", "node_name": ""}
_scalar = lambda op: TensorShape([])  # noqa: E731

for _name, _host, _extra in (
        ("FIFOQueueV2", _create_fifo, {}),
        ("PaddingFIFOQueueV2", _create_padding, {}),
        ("PriorityQueueV2", _create_priority, {}),
        ("RandomShuffleQueueV2", _create_shuffle,
         {"min_after_dequeue": 0, "seed": 0, "seed2": 0})):
    register(OpDef(_name, inputs=(), outputs=("handle: resource",),
                   attrs={**_QUEUE_ATTRS, **_extra}, shape=_scalar, host=_host,
                   uses_session=True, not_differentiable=True))


# -- using a queue ------------------------------------------------------------------------
def _enqueue(handle, *components, timeout_ms, session_state):
    lookup(handle, session_state).enqueue([np.asarray(c) for c in components])
    return ()


def _enqueue_many(handle, *components, timeout_ms, session_state):
    lookup(handle, session_state).enqueue_many([np.asarray(c) for c in components])
    return ()


def _dequeue(handle, *, component_types, timeout_ms, session_state):
    return tuple(lookup(handle, session_state).dequeue())


def _dequeue_many(handle, n, *, component_types, timeout_ms, session_state):
    return tuple(lookup(handle, session_state).dequeue_many(int(n)))


def _dequeue_up_to(handle, n, *, component_types, timeout_ms, session_state):
    return tuple(lookup(handle, session_state).dequeue_many(int(n), allow_small_batch=True))


def _close(handle, *, cancel_pending_enqueues, session_state):
    lookup(handle, session_state).close(bool(cancel_pending_enqueues))
    return ()


def _size(handle, *, session_state):
    return np.int32(lookup(handle, session_state).size())


def _is_closed(handle, *, session_state):
    return np.bool_(lookup(handle, session_state).closed)


_ENQUEUE = dict(outputs=(), attrs={"Tcomponents": _dtypes.ALL, "timeout_ms": -1},
                uses_session=True, not_differentiable=True)
register(OpDef("QueueEnqueueV2", inputs=("handle: resource", "components: list(Tcomponents)"),
               host=_enqueue, **_ENQUEUE))
register(OpDef("QueueEnqueueManyV2",
               inputs=("handle: resource", "components: list(Tcomponents)"),
               host=_enqueue_many, **_ENQUEUE))
_DEQUEUE = dict(outputs=("components: list(component_types)",),
                attrs={"component_types": REQUIRED, "timeout_ms": -1},
                uses_session=True, not_differentiable=True)
register(OpDef("QueueDequeueV2", inputs=("handle: resource",), host=_dequeue, **_DEQUEUE))
register(OpDef("QueueDequeueManyV2", inputs=("handle: resource", "n: int32"),
               host=_dequeue_many, **_DEQUEUE))
register(OpDef("QueueDequeueUpToV2", inputs=("handle: resource", "n: int32"),
               host=_dequeue_up_to, **_DEQUEUE))
register(OpDef("QueueCloseV2", inputs=("handle: resource",), outputs=(),
               attrs={"cancel_pending_enqueues": False}, host=_close, uses_session=True,
               not_differentiable=True))
register(OpDef("QueueSizeV2", inputs=("handle: resource",), outputs=("size: int32",),
               shape=_scalar, host=_size, uses_session=True, not_differentiable=True))
register(OpDef("QueueIsClosedV2", inputs=("handle: resource",), outputs=("is_closed: bool",),
               shape=_scalar, host=_is_closed, uses_session=True, not_differentiable=True))
