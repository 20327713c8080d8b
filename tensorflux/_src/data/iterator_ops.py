"""Iterators: the graph ops through which a Session pulls dataset elements.

An iterator is named by a handle string. Its state (the running generators of one
initialization) lives in the Session's resources under that handle, so two Sessions
iterate independently and closing a Session stops its prefetch threads.

Ops (host ops, TF's names):
- MakeIterator(inputs...) starts a fresh pass: it takes the dataset's tensor arguments
  as inputs, so a placeholder fed to the initializer run is what the pipeline sees.
- IteratorGetNext(handle, inputs...) returns the next element; at the end it raises
  OutOfRangeError. A one-shot iterator's GetNext also takes the dataset's inputs and
  initializes itself on first use.
"""

from __future__ import annotations

import itertools
import threading
import weakref

import numpy as np

from tensorflux._src.data import optional_ops
from tensorflux._src.data import structure as _structure
from tensorflux._src.data.dataset_ops import (
    INPUT_TYPES, Dataset, ElementError, IterationContext,
)
from tensorflux._src.data.type_specs import DatasetSpec
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import REQUIRED, OpDef, register

_DATASETS = weakref.WeakValueDictionary()  # token -> Dataset (graphs keep them alive)
_tokens = itertools.count()
_tokens_lock = threading.Lock()


def _token(prefix):
    with _tokens_lock:
        return f"{prefix}_{next(_tokens)}"


def _register_dataset(dataset):
    token = _token("dataset")
    _DATASETS[token] = dataset
    graph = _graph.get_default_graph()
    if not hasattr(graph, "_datasets_used_in_graph"):
        graph._datasets_used_in_graph = []
    graph._datasets_used_in_graph.append(dataset)
    return token


class _IteratorState:
    """One initialization: the element generator and what must close with it."""

    def __init__(self, dataset, values, entropy=None):
        self.dataset, self.values = dataset, list(values)
        self.structure = dataset._structure
        self.context = IterationContext(dict(zip(dataset._inputs(), values)),
                                        entropy=entropy)
        self.elements = dataset._iterate(self.context)
        self.lock = threading.Lock()
        self.consumed = 0  # elements (failed ones too) taken, for checkpoints

    def next(self):
        """The next element as its flat arrays, or None at the end. A failed element
        raises its error; the iteration goes on after it, as in TF."""
        with self.lock:  # one consumer at a time: generators are not reentrant
            element = next(self.elements, None)
            if element is not None:
                self.consumed += 1
        if element is None:
            return None
        if type(element) is ElementError:
            raise element.error
        return self.structure.to_arrays(element)

    def close(self):
        self.elements.close()
        self.context.close()


def _make_iterator(*inputs, dataset, handle, session_state):
    old = session_state.resources.pop(handle, None)
    if old is not None:
        old.close()
    session_state.resources[handle] = _IteratorState(_DATASETS[dataset], inputs)
    return ()


def _state(handle, inputs, dataset, session_state):
    """The iterator's state; a one-shot iterator (`dataset` set) starts on first use."""
    handle = handle.item() if hasattr(handle, "item") else handle
    handle = handle.decode() if isinstance(handle, bytes) else handle
    state = session_state.resources.get(handle)
    if state is None:
        if not dataset:
            raise errors.FailedPreconditionError(
                None, None, "GetNext() failed because the iterator has not been initialized. "
                "Ensure that you have run the initializer operation for this iterator before "
                "getting the next element.")
        state = session_state.resources[handle] = _IteratorState(_DATASETS[dataset], inputs)
    return state


def _to_string_handle(handle, *inputs, dataset, session_state):
    _state(handle, inputs, dataset, session_state)
    return handle


def _get_next(handle, *inputs, dataset, output_types, output_shapes, session_state):
    element = _state(handle, inputs, dataset, session_state).next()
    if element is None:
        raise errors.OutOfRangeError(None, None, "End of sequence")
    return tuple(element)


def _get_next_as_optional(handle, *inputs, dataset, output_types, output_shapes,
                          session_state):
    """(has_value, components...): at the end, False and placeholder values."""
    element = _state(handle, inputs, dataset, session_state).next()
    if element is None:
        return (np.bool_(False), *optional_ops.empty_arrays(output_types, output_shapes))
    return (np.bool_(True), *element)


register(OpDef(
    "MakeIterator", inputs=("inputs: list(Tin)",), outputs=(),
    attrs={"Tin": INPUT_TYPES, "dataset": REQUIRED, "handle": REQUIRED},
    host=_make_iterator, uses_session=True, not_differentiable=True,
))
register(OpDef(
    "IteratorGetNext", inputs=("handle: string", "inputs: list(Tin)"),
    outputs=("components: list(output_types)",),
    attrs={"Tin": INPUT_TYPES, "dataset": "", "output_types": REQUIRED,
           "output_shapes": REQUIRED},
    host=_get_next, uses_session=True, not_differentiable=True,
))

register(OpDef(
    "IteratorGetNextAsOptional", inputs=("handle: string", "inputs: list(Tin)"),
    outputs=("has_value: bool", "components: list(output_types)"),
    attrs={"Tin": INPUT_TYPES, "dataset": "", "output_types": REQUIRED,
           "output_shapes": REQUIRED},
    host=_get_next_as_optional, uses_session=True, not_differentiable=True,
))

register(OpDef(
    "IteratorToStringHandle", inputs=("handle: string", "inputs: list(Tin)"),
    outputs=("string_handle: string",), attrs={"Tin": INPUT_TYPES, "dataset": ""},
    host=_to_string_handle, uses_session=True, not_differentiable=True,
))


class Iterator(_structure.HasStructure):
    """TF1's tf.data.Iterator: `get_next()`, `initializer`, `make_initializer`,
    `string_handle()`, `from_structure`, `from_string_handle`."""

    def __init__(self, handle, structure, initializer=None, one_shot_dataset=None):
        self._handle = handle  # a Python string, or a string Tensor (from_string_handle)
        self._structure = structure
        self._initializer = initializer
        self._one_shot = one_shot_dataset

    # -- constructors ------------------------------------------------------------------
    @classmethod
    def _one_shot(cls, dataset):
        return cls(_token("one_shot_iterator"), dataset._structure, one_shot_dataset=dataset)

    @classmethod
    def _initializable(cls, dataset, shared_name=None):
        iterator = cls(shared_name or _token("iterator"), dataset._structure)
        iterator._initializer = iterator.make_initializer(dataset)
        iterator._dataset = dataset
        return iterator

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None,
                       output_classes=None):
        types = _structure.flatten(output_types)
        try:
            shapes = _structure.flatten_up_to(output_types, output_shapes) \
                if output_shapes is not None else [None] * len(types)
            classes = _structure.flatten_up_to(output_types, output_classes) \
                if output_classes is not None else None
        except ValueError as exc:
            raise TypeError(f"output_shapes must have the structure of output_types: "
                            f"{exc}") from None
        structure = _structure.Structure.from_specs(output_types, types, shapes, classes)
        return Iterator(shared_name or _token("iterator"), structure)

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None,
                           output_classes=None):
        iterator = Iterator.from_structure(output_types, output_shapes,
                                           output_classes=output_classes)
        iterator._handle = string_handle
        return iterator

    # -- the TF1 surface ---------------------------------------------------------------
    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer: a one-shot iterator "
                             "initializes itself; for one built with from_structure, use "
                             "make_initializer(dataset)")
        return self._initializer

    def make_initializer(self, dataset, name=None):
        if not isinstance(dataset, Dataset):
            raise TypeError(f"make_initializer takes a Dataset, got {type(dataset).__name__}")
        if not isinstance(self._handle, str):
            raise ValueError("an iterator made from a string handle cannot be initialized "
                             "here; initialize the iterator the handle names")
        if any(isinstance(spec, DatasetSpec) for spec in dataset._structure.specs):
            raise TypeError("An iterator cannot produce elements that are datasets (as "
                            "`window` makes); consume them with flat_map or interleave")
        if not dataset._structure.is_compatible_with(self._structure):
            raise TypeError(f"Expected output types {self._structure.output_types} and shapes "
                            f"{self._structure.output_shapes} but got dataset with output "
                            f"types {dataset.output_types} and shapes "
                            f"{dataset.output_shapes}.")
        return apply_op("MakeIterator", name=name or "MakeIterator",
                        inputs=dataset._inputs(), dataset=_register_dataset(dataset),
                        handle=self._handle)

    def _one_shot_inputs(self):
        """(inputs, dataset token) that let an op start a one-shot iterator."""
        if self._one_shot is None:
            return [], ""
        if not hasattr(self, "_one_shot_token"):
            self._one_shot_token = _register_dataset(self._one_shot)
        return self._one_shot._inputs(), self._one_shot_token

    def _apply_get_next(self, op_type, name):
        if self._one_shot is not None and any(
                isinstance(spec, DatasetSpec) for spec in self._structure.specs):
            raise TypeError("An iterator cannot produce elements that are datasets (as "
                            "`window` makes); consume them with flat_map or interleave")
        flat = self._structure.flat_tensor_specs()
        inputs, dataset_token = self._one_shot_inputs()
        outputs = apply_op(
            op_type, name=name or op_type, handle=self._handle, inputs=inputs,
            dataset=dataset_token, output_types=tuple(d for d, _ in flat),
            output_shapes=tuple(s for _, s in flat))
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        components = outputs[-len(flat):] if flat else []
        for tensor, (_, shape) in zip(components, flat):
            tensor.set_shape(shape)
        return outputs, components

    def get_next(self, name=None):
        _, components = self._apply_get_next("IteratorGetNext", name)
        return self._structure.graph_pack(components)

    def get_next_as_optional(self):
        """An Optional holding the next element, or none at the end of the input."""
        outputs, components = self._apply_get_next("IteratorGetNextAsOptional", None)
        return optional_ops.make_optional(outputs[0], components, self._structure)

    def string_handle(self, name=None):
        """A string tensor naming this iterator, to feed to `from_string_handle`."""
        if not isinstance(self._handle, str):
            return self._handle
        inputs, dataset_token = self._one_shot_inputs()
        return apply_op("IteratorToStringHandle", name=name or "IteratorToStringHandle",
                        handle=self._handle, inputs=inputs, dataset=dataset_token)


def get_next_as_optional(iterator):
    """`tf.data.experimental.get_next_as_optional(iterator)`."""
    return iterator.get_next_as_optional()


class EagerIterator(_structure.HasStructure):
    """Iteration over a dataset while eager execution is on (`for x in dataset`,
    `tf.contrib.eager.Iterator(dataset)`): a one-shot iterator whose `get_next` op runs
    at each step, its state kept by the eager context; OutOfRangeError ends it."""

    def __init__(self, dataset):
        from tensorflux._src.framework.behaviour import executing_eagerly
        if not executing_eagerly():
            raise RuntimeError("tf.data.Dataset iterators can only be used when eager "
                               "execution is enabled.")
        self._iterator = Iterator._one_shot(dataset)
        self._structure = dataset._structure

    def __iter__(self):
        return self

    def __next__(self):
        from tensorflux._src.framework import errors
        try:
            return self._iterator.get_next()
        except errors.OutOfRangeError:
            raise StopIteration from None

    def next(self):
        """The next element (TF1's Python 2 spelling, used by tfe.Iterator programs)."""
        return self.__next__()

    def get_next(self, name=None):
        """The next element; raises OutOfRangeError at the end, as TF's does."""
        return self._iterator.get_next(name)


class NumpyIterator:
    """`tf.data.NumpyIterator`: a dataset's elements as NumPy values.

    TF builds it in eager mode only (in graph mode `as_numpy_iterator` raises). Here,
    always in graph mode, it iterates through the default Session (a `with
    tf.Session():` block or an InteractiveSession): SparseTensors come back as
    SparseTensorValues, strings as bytes."""

    def __init__(self, dataset):
        from tensorflux._src.framework.behaviour import executing_eagerly
        from tensorflux._src.framework.default_session import get_default_session
        if executing_eagerly():
            self._eager = EagerIterator(dataset)
            return
        self._eager = None
        session = get_default_session()
        if session is None:
            raise RuntimeError("`tf.data.Dataset.as_numpy_iterator()` is only supported in "
                               "eager mode (here: inside a default Session, such as a "
                               "`with tf.Session():` block).")
        for spec in dataset._structure.specs:
            if isinstance(spec, DatasetSpec):
                raise TypeError(f"Dataset.as_numpy_iterator() is not supported for datasets "
                                f"that produce values of type {spec.value_type}")
        self._session = session
        with session.graph.as_default():
            self._next = Iterator._one_shot(dataset).get_next()

    def __iter__(self):
        return self

    def __next__(self):
        if self._eager is not None:
            return _structure_map(lambda t: t.numpy(), next(self._eager))
        try:
            return self._session.run(self._next)
        except errors.OutOfRangeError:
            raise StopIteration from None

    next = __next__


def _structure_map(fn, value):
    if isinstance(value, dict):
        return {k: _structure_map(fn, v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_structure_map(fn, v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return fn(value) if hasattr(value, "numpy") else value
