"""`tf.CriticalSection` and its ops (host records, TF's names): MutexV2, MutexLock,
ConsumeMutexLock.

The mutex is a resource of the Session that runs it (one per shared name, or per op), in
the Session's `Resources` as queues are. `execute(fn)` builds, as TF's does:

    MutexLock(handle)            host op: blocks until the mutex is free; a lock token
    fn's ops                     each gets a control dependency on the lock
    ConsumeMutexLock(token)      host op after fn's outputs: releases the mutex
    identities of fn's outputs   after the release

Host ops split a run into steps (compiler/run_plan.py), and control dependencies count
in the host depth, so fn's compiled ops run in a cluster after the lock's host step and
the release runs after them. Runs in other threads that reach the lock block in their
own host step (holding no Session lock) until the release. Two executions of one
critical section in the same run are ordered one after the other by the planner
(`_serial_section`, see run_plan.serial_edges): a run is sequential here, so the second
lock would otherwise wait for ever on the first. A run that fails between lock and
release releases the mutex (executable.py: tokens in the run's values are released), as
TF's lock token is released when the step drops it.
"""

from __future__ import annotations

import threading

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import nest
from tensorflux._src.framework.operation import Operation, Tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array.array_ops import identity
from tensorflux._src.ops.control import control_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.queues import queue_ops

__all__ = ["CriticalSection"]

CRITICAL_SECTIONS = "critical_sections"
CRITICAL_SECTION_EXECUTIONS = "critical_section_executions"


class Mutex:
    """A Session's mutex: not reentrant; closing the Session cancels waiters."""

    def __init__(self, name):
        self.name = name
        self._cond = threading.Condition()
        self._held = False
        self._cancelled = False

    def acquire(self):
        with self._cond:
            while self._held and not self._cancelled:
                self._cond.wait()
            if self._cancelled:
                raise errors.CancelledError(
                    None, None, f"Mutex {self.name} was cancelled: the Session is closed.")
            self._held = True
        return LockToken(self)

    def _release(self):
        with self._cond:
            self._held = False
            self._cond.notify()

    def cancel(self):
        with self._cond:
            self._cancelled = True
            self._cond.notify_all()

    def close(self):
        self.cancel()


class LockToken:
    """What MutexLock outputs (TF's variant lock); the mutex is held until `release`."""

    def __init__(self, mutex):
        self._mutex = mutex
        self._released = False
        self._guard = threading.Lock()

    def release(self):
        with self._guard:
            if self._released:
                return
            self._released = True
        self._mutex._release()

    release_at_run_end = release  # executable.py calls it when a run fails

    def __repr__(self):
        return f"<lock on {self._mutex.name}>"


def _create_mutex(*, container, shared_name, node_name, session_state):
    key = queue_ops.resource_key(shared_name, node_name)
    queue_ops.session_resources(session_state).get_or_create(
        key, node_name, shared_name, Mutex)
    return queue_ops.handle_value(key)


def _lock(handle, *, session_state):
    mutex = queue_ops.lookup(handle, session_state)
    if not isinstance(mutex, Mutex):
        raise errors.InvalidArgumentError(None, None, f"Resource {handle.item()} is not a "
                                                      f"Mutex")
    return np.array(mutex.acquire(), dtype=object)


def _consume(mutex_lock):
    token = mutex_lock.item() if isinstance(mutex_lock, np.ndarray) else mutex_lock
    if not isinstance(token, LockToken):
        raise errors.InvalidArgumentError(None, None, "Input 0 is not a MutexLock")
    token.release()
    return ()


_scalar = lambda op: TensorShape([])  # noqa: E731
register(OpDef("MutexV2", inputs=(), outputs=("resource: resource",),
               attrs={"container": "", "shared_name": "", "node_name": ""}, shape=_scalar,
               host=_create_mutex, uses_session=True, not_differentiable=True))
register(OpDef("MutexLock", inputs=("mutex: resource",), outputs=("mutex_lock: variant",),
               shape=_scalar, host=_lock, uses_session=True, not_differentiable=True))
register(OpDef("ConsumeMutexLock", inputs=("mutex_lock: variant",), outputs=(),
               host=_consume, stateful=True, not_differentiable=True))


_STACK = threading.local()


def _stack():
    if not hasattr(_STACK, "value"):
        _STACK.value = []
    return _STACK.value


class _ExecutionSignature:
    __slots__ = ("op", "handle", "resources", "exclusive_resource_access")

    def __init__(self, op, handle, resources, exclusive_resource_access):
        self.op, self.handle, self.resources = op, handle, resources
        self.exclusive_resource_access = exclusive_resource_access

    def __repr__(self):
        return (f"_ExecutionSignature(op={self.op!r}, handle={self.handle!r}, "
                f"resources={self.resources!r}, "
                f"exclusive_resource_access={self.exclusive_resource_access})")


def _identity(x):
    if isinstance(x, Operation):
        return control_ops.group(x)
    if hasattr(x, "identity") and not isinstance(x, Tensor):  # TensorArray
        return x.identity()
    return identity(x)


def _resources(op):
    """The resources an op uses directly: resource handles, and the variables of its
    Ref inputs (tensorflux's variables are refs; TF's resource variables pass handles)."""
    for t in op.inputs:
        if t.dtype.base_dtype == _dtypes.resource:
            yield t
        elif t.dtype._is_ref_dtype and t.op.op_def.is_variable:
            yield t


class CriticalSection:
    """Runs subgraphs serially: `execute(fn)` holds the section's mutex while fn's ops
    run, so executions from concurrent `Session.run` calls never interleave."""

    def __init__(self, name=None, shared_name=None, critical_section_def=None,
                 import_scope=None):
        if critical_section_def and name is not None:
            raise ValueError("critical_section_def and shared_name are mutually exclusive.")
        if critical_section_def:
            raise ValueError("critical_section_def is not supported.")
        graph = _graph.get_default_graph()
        with _graph.name_scope(name, "CriticalSection", []) as scope:
            with _graph.control_dependencies(None):  # TF's init_scope
                if shared_name is None:
                    shared_name = scope  # as TF: the scope name, with its "/"
                container = graph._container or ""
                self._handle = apply_op("MutexV2", name=scope, container=container,
                                        shared_name=shared_name, node_name="")
        self._handle.op._attrs["node_name"] = self._handle.op.name  # the resource's name
        self._signature = (container, shared_name or id(self._handle),
                           self._handle.op.device)
        graph.add_to_collections(CRITICAL_SECTIONS, self)

    @property
    def name(self):
        return self._handle.op.name

    def execute(self, fn, exclusive_resource_access=True, name=None):
        """Runs `fn()` (no arguments) inside the critical section; returns its outputs,
        available after the mutex is released."""
        graph = _graph.get_default_graph()
        with _graph.name_scope(name, "critical_section_execute", []):
            stack = _stack()
            if self._signature in stack:
                raise ValueError(_ALREADY_RUNNING)
            stack.append(self._signature)
            try:
                lock = apply_op("MutexLock", mutex=self._handle)
                existing = set(graph.get_operations())
                with _graph.control_dependencies([lock]):
                    r = fn()
                created = [op for op in graph.get_operations() if op not in existing]
            finally:
                stack.pop()
            self._add_control_dependencies_to_lock(created, lock.op)
            captured = []
            for op in created:
                for t in _resources(op):
                    if t not in captured:
                        captured.append(t)
            if any(self._is_self_handle(t) for t in captured):
                raise ValueError(_ALREADY_RUNNING)
            self._check_multiple_access_to_resources(captured, exclusive_resource_access)

            flat = nest.flatten(r)
            r_flat = [_identity(x) for x in flat]
            with _graph.control_dependencies(r_flat):
                with graph.colocate_with(self._handle.op):
                    release = apply_op("ConsumeMutexLock", mutex_lock=lock)
                # If any of fn's outputs is used, all of them have run (TF's tuple).
                gate = control_ops.group(*r_flat)
                with _graph.control_dependencies([gate]):
                    gated = [_identity(x) for x in flat]
            r = nest.pack_sequence_as(r, gated)
            with _graph.control_dependencies([release]):
                outputs = nest.map_structure(_identity, r)
            # Two executions in one run: the planner runs the second after the first's
            # release (the handle op names the mutex).
            lock.op._serial_section = (self._signature, release)
            graph.add_to_collections(CRITICAL_SECTION_EXECUTIONS, _ExecutionSignature(
                lock.op, self._handle, captured, exclusive_resource_access))
            return outputs

    def _add_control_dependencies_to_lock(self, created_ops, lock_op):
        """fn's arguments from outside fn run before the lock (TF: avoids deadlocks)."""
        created = set(created_ops)
        args = []
        for op in created_ops:
            for p in [t.op for t in op.inputs] + list(op.control_inputs):
                if (p not in created and p is not lock_op and p not in args
                        and p not in lock_op.control_inputs
                        and p not in [t.op for t in lock_op.inputs]):
                    args.append(p)
        if not args:
            return
        with _graph.control_dependencies(None):
            gate = control_ops.group(*args)
        lock_op._add_control_input(gate)

    def _is_self_handle(self, x):
        if x is self._handle:
            return True
        op = x.op
        return (op.type == "MutexV2" and bool(op.get_attr("shared_name"))
                and op.get_attr("shared_name") == self._handle.op.get_attr("shared_name")
                and op.device == self._handle.op.device)

    def _check_multiple_access_to_resources(self, captured, exclusive_resource_access):
        graph = _graph.get_default_graph()
        for sg in graph.get_collection(CRITICAL_SECTION_EXECUTIONS):
            if self._is_self_handle(sg.handle):
                continue  # executions of this same critical section may share
            if not (exclusive_resource_access or sg.exclusive_resource_access):
                continue
            both = [t for t in captured if t in sg.resources]
            if both:
                raise ValueError(
                    f"This execution would access resources: {both}.  Either this lock "
                    f"(CriticalSection: {self._handle}) or lock '{sg}' (CriticalSection: "
                    f"{sg.handle}) requested exclusive resource access of this resource.  "
                    f"Did you mean to call execute with keyword argument "
                    f"exclusive_resource_access=False?")


_ALREADY_RUNNING = ("Attempting to lock a CriticalSection in which we are already running. "
                    "This is illegal and may cause deadlocks.")
