"""Transformations over the element stream: scan, take_while, unique, enumerate,
ignore_errors, assert_cardinality and pad_to_cardinality.

`trace_state_function` is shared by scan, reduce and group_by_reducer: a function of
(state, element) is traced with the initial state's specs, and traced again with
weakened state shapes while the new state's shapes differ (TF's rule), so a state
that grows (a concatenation) gets an unknown dimension.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.data import structure as _structure
from tensorflux._src.data.dataset_ops import INFINITE, Dataset, ElementError
from tensorflux._src.data.functions import StructuredFunction
from tensorflux._src.data.sources import (CounterDataset, ZipDataset, _graph_tensors,
                                          _leaf_value, _normalize_leaf, _spec)
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.platform import tf_logging


class State:
    """An initial state given by the user: its structure and how to evaluate it."""

    def __init__(self, initial_state):
        self.leaves = [_normalize_leaf(leaf) for leaf in _structure.flatten(initial_state)]
        self.structure = _structure.Structure(initial_state, [_spec(l) for l in self.leaves])
        self.tensors = _graph_tensors(self.leaves)

    def values(self, ctx):
        return tuple(_leaf_value(ctx, leaf) for leaf in self.leaves)


def _classes(structure):
    return structure.pack([_structure.legacy_class(s) for s in structure.specs])


def trace_state_function(func, state, element, transformation, pair_message=None):
    """(function, state structure): `func(state, element)` traced until the state's
    shapes are stable. With `pair_message`, the function returns (new_state, output)."""
    while True:
        inputs = _structure.Structure((state.template, element.template),
                                      state.specs + element.specs)
        function = StructuredFunction(func, inputs, transformation)
        out = function.output_structure
        if pair_message is not None:
            if not (_structure.is_structure(out.template) and not isinstance(
                    out.template, dict) and len(out.template) == 2):
                raise TypeError(pair_message)
            n = len(_structure.flatten(out.template[0]))
            new = _structure.Structure(out.template[0], out.specs[:n])
        else:
            new = out
        check_new_state(state, new)
        weakened = [a.most_specific_compatible_type(b) for a, b in zip(state.specs,
                                                                        new.specs)]
        if all(_shape_key(a) == _shape_key(w) for a, w in zip(state.specs, weakened)):
            return function, state
        state = _structure.Structure(state.template, weakened)


def _shape_key(spec):
    shape = spec.shape
    return None if shape.ndims is None else tuple(shape.as_list())


def check_new_state(state, new):
    if not _structure.same_nesting(state.template, new.template) or \
            len(state.specs) != len(new.specs):
        raise TypeError(f"The new state must have the structure of the initial state. "
                        f"Expected {state.template!r}; got {new.template!r}.")
    if any(type(a) is not type(b) for a, b in zip(state.specs, new.specs)):
        raise TypeError(f"The element classes for the new state must match the initial "
                        f"state. Expected {_classes(state)}; got {_classes(new)}.")
    if any(a.dtype != b.dtype for a, b in zip(state.specs, new.specs)):
        raise TypeError(f"The element types for the new state must match the initial "
                        f"state. Expected {state.output_types}; got {new.output_types}.")


class ScanDataset(Dataset):
    """`scan(initial_state, scan_func)`: scan_func(state, element) returns (new_state,
    output); the outputs are the elements."""

    def __init__(self, input_dataset, initial_state, scan_func):
        self._children = (input_dataset,)
        self._state = State(initial_state)
        self._function, state = trace_state_function(
            scan_func, self._state.structure, input_dataset._structure, "scan",
            "The scan function must return a pair comprising the new state and the "
            "output value.")
        self._n_state = len(state.specs)
        self._functions = (self._function,)
        self._tensor_args = self._state.tensors
        out = self._function.output_structure
        self._structure = _structure.Structure(out.template[1], out.specs[self._n_state:])

    def _iterate(self, ctx):
        function = ctx.function(self._function)
        state = self._state.values(ctx)
        for element in self._children[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            try:
                out = function(state + tuple(element))
            except errors.OpError as exc:
                yield ElementError(exc)
                continue
            state = tuple(out[:self._n_state])
            yield tuple(out[self._n_state:])

    def _cardinality(self, ctx):
        return self._children[0]._cardinality(ctx)


def _scalar_bool_function(func, structure, transformation):
    function = StructuredFunction(func, structure, transformation)
    specs = function.output_structure.specs
    if len(specs) != 1 or not isinstance(specs[0], _structure.TensorSpec) or \
            specs[0].dtype != _dtypes.bool or not specs[0].shape.is_compatible_with([]):
        raise ValueError(f"`predicate` return type must be convertible to a scalar boolean "
                         f"tensor. Was {function.output_structure.describe()}.")
    return function


class TakeWhileDataset(Dataset):
    """The elements up to the first for which `predicate` is False."""

    def __init__(self, input_dataset, predicate):
        self._children = (input_dataset,)
        self._function = _scalar_bool_function(predicate, input_dataset._structure,
                                               "take_while")
        self._functions = (self._function,)
        self._structure = input_dataset._structure

    def _iterate(self, ctx):
        predicate = ctx.function(self._function)
        for element in self._children[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            try:
                keep = bool(predicate(element)[0])
            except errors.OpError as exc:
                yield ElementError(exc)
                continue
            if not keep:
                return
            yield element


class UniqueDataset(Dataset):
    """Each distinct element once, in order of first appearance."""

    def __init__(self, input_dataset):
        structure = input_dataset._structure
        if _structure.is_structure(structure.template) or not structure.all_dense or \
                structure.specs[0].dtype not in (_dtypes.int32, _dtypes.int64, _dtypes.string):
            raise TypeError("`tf.data.experimental.unique()` only supports inputs with a "
                            "single `tf.int32`, `tf.int64`, or `tf.string` component.")
        self._children = (input_dataset,)
        self._structure = structure

    def _iterate(self, ctx):
        seen = set()
        for element in self._children[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            value = np.asarray(element[0])
            key = (value.shape, value.tobytes() if value.dtype != object
                   else tuple(bytes(v) for v in value.ravel()))
            if key not in seen:
                seen.add(key)
                yield element


def enumerate_dataset(dataset, start=0):
    """(index, element) pairs, the index counting from `start` as int64."""
    return ZipDataset((CounterDataset(start, 1, _dtypes.int64), dataset))


class IgnoreErrorsDataset(Dataset):
    """The input without its failed elements. An input that cannot go on after an error
    (a generator that raised) ends there, as TF's does."""

    def __init__(self, input_dataset, log_warning=False):
        self._children = (input_dataset,)
        self._structure = input_dataset._structure
        self._log_warning = log_warning

    def _iterate(self, ctx):
        try:
            for element in self._children[0]._iterate(ctx):
                if type(element) is ElementError:
                    self._log(element.error)
                    continue
                yield element
        except errors.OpError as exc:
            self._log(exc)

    def _log(self, error):
        if self._log_warning:
            tf_logging.warning("Error raised with error message %s", error.message)


def _elements_text(n):
    if n == INFINITE:
        return "an infinite number of elements"
    return f"{n} element{'' if n == 1 else 's'}"


class AssertCardinalityDataset(Dataset):
    """The input, checked to have `expected_cardinality` elements (FailedPrecondition
    otherwise, as TF's kernel reports)."""

    def __init__(self, input_dataset, expected_cardinality):
        self._children = (input_dataset,)
        self._structure = input_dataset._structure
        self._expected = expected_cardinality
        self._tensor_args = (expected_cardinality,)

    def _iterate(self, ctx):
        expected = ctx.int_arg(self._expected, "expected_cardinality")
        count = 0
        for element in self._children[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            count += 1
            if expected != INFINITE and count > expected:
                yield ElementError(errors.FailedPreconditionError(
                    None, None, f"Input dataset was expected to contain "
                    f"{_elements_text(expected)} but contained at least "
                    f"{_elements_text(expected + 1)}."))
                return
            yield element
        if count != expected:
            yield ElementError(errors.FailedPreconditionError(
                None, None, f"Input dataset was expected to contain "
                f"{_elements_text(expected)} but contained only {_elements_text(count)}."))

    def _cardinality(self, ctx):
        return ctx.int_arg(self._expected, "expected_cardinality")


class PadToCardinalityDataset(Dataset):
    """`pad_to_cardinality(n, mask_key)`: dict elements gain `mask_key`=True, then
    filler elements (zeros, b"" for strings, `mask_key`=False) up to `n` elements."""

    def __init__(self, input_dataset, cardinality, mask_key="valid"):
        structure = input_dataset._structure
        if not isinstance(structure.template, dict):
            raise ValueError("`pad_to_cardinality` requires its input dataset to be a "
                             "dictionary.")
        if not structure.all_dense:
            raise TypeError("`pad_to_cardinality` pads dense components only")
        self._children = (input_dataset,)
        self._target, self._mask_key = cardinality, mask_key
        self._tensor_args = (cardinality,)
        template = dict(structure.template)
        template[mask_key] = None
        specs = dict(zip(sorted(structure.template), structure.specs))
        specs[mask_key] = _structure.ComponentSpec(_dtypes.bool, [])
        self._mask_position = sorted(template).index(mask_key)
        self._structure = _structure.Structure(template, [specs[k] for k in sorted(template)])

    def _with_mask(self, element, valid):
        values = list(element)
        values.insert(self._mask_position, np.bool_(valid))
        return tuple(values)

    def _iterate(self, ctx):
        target = ctx.int_arg(self._target, "cardinality")
        n = self._children[0]._cardinality(ctx)
        if n < 0:
            raise errors.InvalidArgumentError(
                None, None, f"The dataset passed into `pad_to_cardinality` must have a known "
                f"cardinalty, but has cardinality {n}")
        if n > target:
            raise errors.InvalidArgumentError(
                None, None, f"The dataset passed into `pad_to_cardinality` must have a "
                f"cardinalty less than the target cardinality ({target}), but has "
                f"cardinality {n}")
        for element in self._children[0]._iterate(ctx):
            yield element if type(element) is ElementError else self._with_mask(element, True)
        inner = self._children[0]._structure
        filler = self._with_mask(
            tuple(np.zeros([d or 0 for d in s.shape.as_list()], s.dtype.as_numpy_dtype)
                  if s.dtype != _dtypes.string else
                  np.full([d or 0 for d in s.shape.as_list()], b"", object)
                  for s in inner.specs), False)
        for _ in range(target - n):
            yield filler

    def _cardinality(self, ctx):
        return ctx.int_arg(self._target, "cardinality")

