"""Persistent tensors (TF1's session handles): a value kept in a Session between runs.

`sess.run(tf.get_session_handle(t))` stores t's value in the Session and returns a
`TensorHandle`; feeding the handle (or its string) to the placeholder of
`tf.get_session_tensor(handle, dtype)` gives the value back in a later run, and a
TensorHandle may also be fed directly as the value of any tensor of its dtype.
`tf.delete_session_tensor` frees it. Values live in the Session's resources, so they end
with it.
"""

from __future__ import annotations

import itertools

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.constant import placeholder
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import REQUIRED, OpDef, register

__all__ = ["get_session_handle", "get_session_tensor", "delete_session_tensor",
           "TensorHandle"]

_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"
_RESOURCE = "_session_tensors"


class _Store(dict):
    """handle string -> numpy value, one per Session (a Session resource)."""

    def __init__(self):
        super().__init__()
        self.ids = itertools.count()

    def close(self):
        self.clear()


def _store(session_state) -> _Store:
    store = session_state.resources.get(_RESOURCE)
    if store is None:
        store = session_state.resources[_RESOURCE] = _Store()
    return store


def _handle_string(handle):
    handle = handle.item() if isinstance(handle, np.ndarray) else handle
    return handle.decode() if isinstance(handle, bytes) else str(handle)


def _lookup(store, handle, op_type):
    value = store.get(handle)
    if value is None:
        raise errors.InvalidArgumentError(
            None, None, f"{op_type}: the tensor with handle '{handle}' is not in the session "
                        f"(never stored, or already deleted).")
    return value


def _store_value(value, session_state):
    store = _store(session_state)
    handle = f"GetSessionHandle;{next(store.ids)};{_DEVICE}"
    store[handle] = np.array(value, copy=True)
    return np.array(handle.encode(), dtype=object)


def _load_value(handle, dtype, session_state):
    value = _lookup(_store(session_state), _handle_string(handle), "GetSessionTensor")
    if _dtypes.as_dtype(value.dtype) != dtype:
        raise errors.InvalidArgumentError(
            None, None, f"GetSessionTensor: the tensor with handle '{_handle_string(handle)}' "
                        f"has dtype {_dtypes.as_dtype(value.dtype).name}, not {dtype.name}.")
    return value


def _delete_value(handle, session_state):
    store = _store(session_state)
    _lookup(store, _handle_string(handle), "DeleteSessionTensor")
    del store[_handle_string(handle)]
    return ()


register(OpDef(
    "GetSessionHandle", inputs=("value: T",), outputs=("handle: string",),
    attrs={"T": _dtypes.ALL}, shape=lambda op: TensorShape([]), host=_store_value,
    uses_session=True, not_differentiable=True,
))
register(OpDef(
    "GetSessionTensor", inputs=("handle: string",), outputs=("value: dtype",),
    attrs={"dtype": _dtypes.ALL}, shape=lambda op: unknown_shape(), host=_load_value,
    uses_session=True, not_differentiable=True,
))
register(OpDef(
    "DeleteSessionTensor", inputs=("handle: string",), outputs=(), attrs={},
    host=_delete_value, uses_session=True, not_differentiable=True,
))


def get_session_handle(data, name=None):
    """A string tensor: running it stores `data`'s value in the Session; `Session.run`
    returns a TensorHandle for it."""
    return apply_op("GetSessionHandle", name=name, value=data)


def get_session_tensor(handle, dtype, name=None):
    """(placeholder for a handle string, the stored tensor of `dtype`); feed the handle
    (or the TensorHandle) to the placeholder."""
    dtype = _dtypes.as_dtype(dtype)
    with _graph.name_scope(name, "GetSessionTensor") as scope:
        holder = placeholder(_dtypes.string, [], name="handle")
        tensor = apply_op("GetSessionTensor", name=scope.rstrip("/").rsplit("/", 1)[-1],
                          handle=holder, dtype=dtype)
    return holder, tensor


def delete_session_tensor(handle, name=None):
    """(placeholder for a handle string, an op deleting that stored tensor)."""
    with _graph.name_scope(name, "DeleteSessionTensor") as scope:
        holder = placeholder(_dtypes.string, [], name="handle")
        deleter = apply_op("DeleteSessionTensor", name=scope.rstrip("/").rsplit("/", 1)[-1],
                           handle=holder)
    return holder, deleter


def _cached(graph, kind, dtype, build):
    """One reader per dtype (and one deleter) per graph, as TF keeps them, so evaluating
    handles does not grow the graph."""
    cache = graph.__dict__.setdefault("_session_handle_ops", {})
    if (kind, dtype) not in cache:
        with graph.as_default():
            cache[(kind, dtype)] = build()
    return cache[(kind, dtype)]


class TensorHandle:
    """What `Session.run` returns for a session handle: the handle string, the stored
    value's dtype and the Session that holds it."""

    def __init__(self, handle, dtype, session):
        self._handle = _handle_string(handle)
        self._dtype = _dtypes.as_dtype(dtype)
        self._session = session

    @property
    def handle(self):
        return self._handle

    @property
    def dtype(self):
        return self._dtype

    def get_raw_handle(self):
        return self._handle

    def _value(self, session):
        if session is not self._session:
            raise errors.InvalidArgumentError(
                None, None, f"The tensor handle {self._handle} belongs to another Session.")
        return _lookup(_store(session._state), self._handle, "GetSessionTensor")

    def eval(self):
        """The stored value (as numpy)."""
        holder, tensor = _cached(self._session.graph, "reader", self._dtype,
                                 lambda: get_session_tensor(self._handle, self._dtype))
        return self._session.run(tensor, {holder: self._handle})

    def delete(self):
        """Frees the stored value."""
        holder, deleter = _cached(self._session.graph, "deleter", None,
                                  lambda: delete_session_tensor(self._handle))
        self._session.run(deleter, {holder: self._handle})

    def __str__(self):
        return self._handle

    def __repr__(self):
        return f"<TensorHandle {self._handle} dtype={self._dtype.name}>"
