"""`tf.data.experimental.make_saveable_from_iterator`: an iterator's position in
tf.train.Saver checkpoints.

TF serializes each dataset kernel's state. Here the state of a pipeline is a chain of
Python generators, so it is saved as what reproduces it: the values the iterator was
initialized with, the entropy of its unseeded random nodes, the number of elements
taken so far and the pipeline's fingerprint. Restoring re-creates the iteration with
that entropy and takes the same number of elements again, so a deterministic pipeline
(seeded or not) continues exactly where it was; a generator (from_generator) is run
again from its start. The state is one string tensor under `<name>_STATE` (TF: a
variant), written and read by the host ops SerializeIterator / DeserializeIterator.
"""

from __future__ import annotations

import base64
import io

import numpy as np

from tensorflux._src.data.cache import read_array, write_array
from tensorflux._src.data.consumers import fingerprint_of
from tensorflux._src.data.iterator_ops import _DATASETS, _IteratorState, _register_dataset
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.ops import constant
from tensorflux._src.ops.lookup.mutable_tables import SaveableObject, SaveSpec
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import REQUIRED, OpDef, register

_VERSION = 1


def _handle_text(handle):
    handle = handle.item() if hasattr(handle, "item") else handle
    return handle.decode() if isinstance(handle, bytes) else handle


def _serialize(handle, session_state):
    state = session_state.resources.get(_handle_text(handle))
    out = io.BytesIO()
    if state is None:  # not started: restoring leaves it to start afresh
        write_array(out, np.int64(-1))
    else:
        fingerprint = fingerprint_of(state.dataset, state.context)
        for value in (np.int64(_VERSION), np.int64(state.consumed),
                      np.int64(state.context.entropy), np.uint64(fingerprint),
                      np.int64(len(state.values))):
            write_array(out, value)
        for value in state.values:
            value = np.asarray(value)
            if value.dtype == object and not all(isinstance(v, (bytes, str))
                                                 for v in value.ravel()):
                raise errors.InvalidArgumentError(
                    None, None, "This iterator's dataset uses a resource (a table or a "
                    "variable) at initialization; its state cannot be checkpointed here")
            write_array(out, value)
    return np.array(base64.b64encode(out.getvalue()), dtype=object)


def _deserialize(handle, serialized, dataset, session_state):
    handle = _handle_text(handle)
    data = io.BytesIO(base64.b64decode(np.asarray(serialized).item()))
    version = int(read_array(data))
    old = session_state.resources.pop(handle, None)
    if old is not None:
        old.close()
    if version < 0:
        return ()
    if version != _VERSION:
        raise errors.InvalidArgumentError(None, None, f"Unknown iterator state version "
                                                      f"{version}")
    consumed, entropy, fingerprint, n_inputs = (read_array(data).item() for _ in range(4))
    values = [read_array(data) for _ in range(int(n_inputs))]
    dataset = _DATASETS[dataset]
    state = _IteratorState(dataset, values, entropy=int(entropy))
    if fingerprint_of(dataset, state.context) != int(fingerprint):
        state.close()
        raise errors.InvalidArgumentError(
            None, None, "The checkpointed iterator state belongs to another input pipeline "
            "than this iterator's")
    with state.lock:
        for _ in range(int(consumed)):
            if next(state.elements, None) is None:
                break
            state.consumed += 1
    session_state.resources[handle] = state
    return ()


register(OpDef("SerializeIterator", inputs=("resource_handle: string",),
               outputs=("serialized: string",), attrs={},
               host=lambda resource_handle, session_state: _serialize(resource_handle,
                                                                      session_state),
               uses_session=True, not_differentiable=True))
register(OpDef("DeserializeIterator", inputs=("resource_handle: string", "serialized: string"),
               outputs=(), attrs={"dataset": REQUIRED},
               host=lambda resource_handle, serialized, dataset, session_state: _deserialize(
                   resource_handle, serialized, dataset, session_state),
               uses_session=True, not_differentiable=True))


class _IteratorSaveable(SaveableObject):
    """The Saver's protocol (train/saver.py): `_saver_read` / `_saver_restore`."""

    def __init__(self, iterator, name):
        dataset = iterator._one_shot or getattr(iterator, "_dataset", None)
        if dataset is None or not isinstance(iterator._handle, str):
            raise ValueError("make_saveable_from_iterator takes an iterator made by "
                             "make_one_shot_iterator or make_initializable_iterator (its "
                             "dataset is what a restore re-creates)")
        with _graph.name_scope(name):
            serialized = apply_op("SerializeIterator", name="SerializeIterator",
                                  resource_handle=iterator._handle)
            self._restore_value = constant.placeholder(_dtypes.string, [], name="state")
            self._restore_op = apply_op(
                "DeserializeIterator", name="DeserializeIterator",
                resource_handle=iterator._handle, serialized=self._restore_value,
                dataset=_register_dataset(dataset))
        super().__init__(iterator, [SaveSpec(serialized, "", name + "_STATE")], name)

    def _saver_read(self, sess):
        return [np.array(sess.run(self.specs[0].tensor), dtype=object)]

    def _saver_restore(self, sess, arrays):
        value = np.array(np.asarray(arrays[0], dtype=object).item(), dtype=object)
        return lambda: sess.run(self._restore_op, {self._restore_value: value})


def make_saveable_from_iterator(iterator, external_state_policy=None):
    """A saveable for `tf.train.Saver`: add it to GraphKeys.SAVEABLE_OBJECTS (or pass it
    in var_list) and the iterator's position is saved and restored with the variables.
    `external_state_policy` is accepted (TF's warning/failure for stateful inputs does
    not apply: generators are replayed)."""
    name = _graph.get_default_graph().unique_name("Iterator")
    return _IteratorSaveable(iterator, name)
