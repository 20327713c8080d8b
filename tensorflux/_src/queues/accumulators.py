"""`tf.ConditionalAccumulator` and `tf.SparseConditionalAccumulator`: gradients from
several workers, averaged (or summed) once enough have arrived.

Like queues, an accumulator is a resource of the Session that runs its ops (host records,
queue_ops.Resources). TF1's kernel rules (conditional_accumulator_base.cc):

- `apply_grad(grad, local_step)` adds `grad` when `local_step >=` the accumulator's
  global step, and silently drops a stale one; the shape is checked against the
  accumulator's and against what is already accumulated (InvalidArgumentError
  "Shape mismatch: ...").
- `take_grad(n)` blocks until n gradients were accumulated, returns their mean
  (`reduction_type="SUM"`: their sum), resets the count and increments the global step.
  The sparse accumulator averages each row over the gradients that had that index.
- `set_global_step(s)` sets the global step (a lower one only logs a warning).
"""

from __future__ import annotations

import collections
import logging
import threading

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import REQUIRED, OpDef, register
from tensorflux._src.queues import queue_ops

__all__ = ["ConditionalAccumulatorBase", "ConditionalAccumulator",
           "SparseConditionalAccumulator"]

_log = logging.getLogger("tensorflux")


def _dims(shape):
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


class _Accumulator:
    """The state both kinds share: count, global step, waiting take attempts."""

    kind = "ConditionalAccumulator"

    def __init__(self, name, dtype, shape, reduction_type):
        self.name = name
        self.dtype = dtype
        self.shape = shape  # tuple with None for unknown dims, or None (unknown rank)
        self.reduction_type = reduction_type
        self.counter = 0
        self.global_step = 0
        self._cond = threading.Condition()
        self._takers = collections.deque()  # waiting take attempts, in arrival order
        self.cancelled = False

    def apply(self, local_step, *grad):
        with self._cond:
            if local_step >= self.global_step:
                self._validate(*grad)
                if self.counter > 0:
                    self._add(*grad)
                else:
                    self._assign(*grad)
                self.counter += 1
                self._cond.notify_all()

    def take(self, num_required):
        if num_required <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"Argument num_required must be positive, but was {num_required}")
        with self._cond:
            token = object()
            self._takers.append(token)
            try:
                # First come, first served, as TF's attempt queue.
                while not self.cancelled and (self._takers[0] is not token
                                              or self.counter < num_required):
                    self._cond.wait()
                if self.cancelled:
                    raise errors.CancelledError(None, None, "TakeGrad operation was cancelled")
                if self.reduction_type == "MEAN":
                    self._divide()
                out = self._output()
                self.counter = 0
                self.global_step += 1
                return out
            finally:
                self._takers.remove(token)
                self._cond.notify_all()

    def set_global_step(self, step):
        with self._cond:
            if step < self.global_step:
                _log.warning("Attempt to set current_global_step_ to smaller value: "
                             "current_global_step_ = %d >= %d = new_global_step.",
                             self.global_step, step)
            self.global_step = step

    def cancel(self):
        with self._cond:
            self.cancelled = True
            self._cond.notify_all()


class DenseAccumulator(_Accumulator):
    def _validate(self, grad):
        if self.counter > 0 and self.value.shape != grad.shape:
            raise errors.InvalidArgumentError(
                None, None, f"Shape mismatch: expected {_dims(self.value.shape)}, got "
                f"{_dims(grad.shape)}")
        if self.shape is not None and (len(self.shape) != grad.ndim or any(
                d is not None and d != g for d, g in zip(self.shape, grad.shape))):
            raise errors.InvalidArgumentError(
                None, None, f"Shape mismatch: expected {_dims(self.shape)}, got "
                f"{_dims(grad.shape)}")

    def _assign(self, grad):
        self.value = np.array(grad, dtype=self.dtype)

    def _add(self, grad):
        self.value = self.value + grad

    def _divide(self):
        self.value = (self.value / self.counter).astype(self.dtype)

    def _output(self):
        return np.asarray(self.value, dtype=self.dtype)


class SparseAccumulator(_Accumulator):
    kind = "SparseConditionalAccumulator"

    def _validate(self, indices, values, shape, has_known_shape):
        if indices.ndim != 1:
            raise errors.InvalidArgumentError(
                None, None, f"Input indices should be vector but received shape: "
                f"{_dims(indices.shape)}")
        if values.ndim == 0:
            raise errors.InvalidArgumentError(None, None, "Values cannot be 0-dimensional.")
        if values.shape[0] != indices.shape[0]:
            raise errors.InvalidArgumentError(
                None, None, f"Expected {indices.shape[0]} non-empty input values, got "
                f"{values.shape[0]}")
        known = self.shape if self.shape is not None else ()
        if has_known_shape:
            if len(known) > shape.size:
                raise errors.InvalidArgumentError(
                    None, None, f"Shape mismatch: expected shape rank at least {len(known)}, "
                    f"got {shape.size}")
            for i, d in enumerate(known):
                if d is not None and d != shape[i]:
                    raise errors.InvalidArgumentError(
                        None, None, f"Shape mismatch: expected shape dim {i} to be {d}, got "
                        f"{shape[i]}")
        if known and known[0] is not None:
            for i, index in enumerate(indices):
                if index >= known[0]:
                    raise errors.InvalidArgumentError(
                        None, None, f"Shape mismatch: index of slice {i} exceeded limits of "
                        f"shape; index is {index} exceeded {known[0]}")
        if self.counter > 0:
            if self.rows_shape is not None and len(self.rows_shape) + 1 != values.ndim:
                raise errors.InvalidArgumentError(
                    None, None, f"Shape mismatch: expected values rank "
                    f"{len(self.rows_shape) + 1}, got {values.ndim}")
            for i, (d, g) in enumerate(zip(self.rows_shape, values.shape[1:]), 1):
                if d != g:
                    raise errors.InvalidArgumentError(
                        None, None, f"Shape mismatch: expected values dim {i} to be {d}, got "
                        f"{g}")
        else:
            if len(known) > values.ndim:
                raise errors.InvalidArgumentError(
                    None, None, f"Shape mismatch: expected values rank at least {len(known)}, "
                    f"got {values.ndim}")
            for i in range(1, len(known)):
                if known[i] is not None and known[i] != values.shape[i]:
                    raise errors.InvalidArgumentError(
                        None, None, f"Shape mismatch: expected values dim {i} to be "
                        f"{known[i]}, got {values.shape[i]}")

    def _assign(self, indices, values, shape, has_known_shape):
        self.rows = {}  # index -> [sum of rows, number of gradients with this index]
        self.rows_shape = values.shape[1:]
        self._add(indices, values, shape, has_known_shape)

    def _add(self, indices, values, shape, has_known_shape):
        for index, row in zip(indices.tolist(), values):
            entry = self.rows.get(index)
            if entry is None:
                self.rows[index] = [np.array(row, dtype=self.dtype), 1]
            else:
                entry[0] = entry[0] + row
                entry[1] += 1

    def _divide(self):
        for entry in self.rows.values():
            entry[0] = (entry[0] / entry[1]).astype(self.dtype)

    def _output(self):
        indices = sorted(self.rows)
        values = np.stack([self.rows[i][0] for i in indices]).astype(self.dtype) if indices \
            else np.zeros((0,) + tuple(self.rows_shape), self.dtype)
        first = self.shape[0] if self.shape and self.shape[0] is not None else -1
        shape = np.array([first] + list(values.shape[1:]), dtype=np.int64)
        return np.array(indices, dtype=np.int64), values, shape


# -- op records (host, Session resources) ------------------------------------------------------
def _creator(make):
    def create(*, dtype, shape, shared_name, node_name, reduction_type, session_state,
               container=""):
        key = queue_ops.resource_key(shared_name, node_name)
        dims = None if shape is None or TensorShape(shape).ndims is None \
            else tuple(TensorShape(shape).as_list())
        accumulator = queue_ops.session_resources(session_state).get_or_create(
            key, node_name, shared_name,
            lambda name: make(name, _dtypes.as_dtype(dtype).as_numpy_dtype, dims,
                              reduction_type))
        if type(accumulator) is not make:
            raise errors.InvalidArgumentError(
                None, None, f"Shared accumulator '{accumulator.name}' has type "
                f"'{accumulator.kind}' that does not match type of Node '{node_name}'")
        return queue_ops.handle_value(key)
    return create


_ACCUMULATOR_ATTRS = {"dtype": _dtypes.NUMBERS, "shape": REQUIRED, "container": "",
                      "shared_name": "", "reduction_type": "MEAN", "node_name": ""}
_SCALAR = lambda op: TensorShape([])  # noqa: E731
_COMMON = dict(uses_session=True, not_differentiable=True)

for _op_type, _make in (("ResourceConditionalAccumulator", DenseAccumulator),
                        ("SparseConditionalAccumulator", SparseAccumulator)):
    register(OpDef(_op_type, inputs=(), outputs=("handle: resource",),
                   attrs=_ACCUMULATOR_ATTRS, shape=_SCALAR, host=_creator(_make), **_COMMON))


def _num_accumulated(handle, *, session_state):
    return np.int32(queue_ops.lookup(handle, session_state).counter)


def _set_global_step(handle, new_global_step, *, session_state):
    queue_ops.lookup(handle, session_state).set_global_step(int(new_global_step))
    return ()


def _apply_dense(handle, local_step, gradient, *, dtype, session_state):
    queue_ops.lookup(handle, session_state).apply(int(local_step), np.asarray(gradient))
    return ()


def _take_dense(handle, num_required, *, dtype, session_state):
    return queue_ops.lookup(handle, session_state).take(int(num_required))


def _apply_sparse(handle, local_step, gradient_indices, gradient_values, gradient_shape, *,
                  dtype, has_known_shape, session_state):
    queue_ops.lookup(handle, session_state).apply(
        int(local_step), np.asarray(gradient_indices), np.asarray(gradient_values),
        np.asarray(gradient_shape).reshape(-1), bool(has_known_shape))
    return ()


def _take_sparse(handle, num_required, *, dtype, session_state):
    return queue_ops.lookup(handle, session_state).take(int(num_required))


register(OpDef("ResourceAccumulatorNumAccumulated", inputs=("handle: resource",),
               outputs=("num_accumulated: int32",), shape=_SCALAR, host=_num_accumulated,
               **_COMMON))
register(OpDef("ResourceAccumulatorSetGlobalStep",
               inputs=("handle: resource", "new_global_step: int64"), outputs=(),
               host=_set_global_step, **_COMMON))
register(OpDef("ResourceAccumulatorApplyGradient",
               inputs=("handle: resource", "local_step: int64", "gradient: dtype"),
               outputs=(), attrs={"dtype": _dtypes.NUMBERS}, host=_apply_dense, **_COMMON))
register(OpDef("ResourceAccumulatorTakeGradient",
               inputs=("handle: resource", "num_required: int32"),
               outputs=("average: dtype",), attrs={"dtype": _dtypes.NUMBERS},
               shape=lambda op: tensor_shape.unknown_shape(), host=_take_dense, **_COMMON))
register(OpDef("SparseAccumulatorApplyGradient",
               inputs=("handle: resource", "local_step: int64", "gradient_indices: int64",
                       "gradient_values: dtype", "gradient_shape: int64"),
               outputs=(), attrs={"dtype": _dtypes.NUMBERS, "has_known_shape": REQUIRED},
               host=_apply_sparse, **_COMMON))
register(OpDef("SparseAccumulatorTakeGradient",
               inputs=("handle: resource", "num_required: int32"),
               outputs=("indices: int64", "values: dtype", "shape: int64"),
               attrs={"dtype": _dtypes.NUMBERS},
               shape=lambda op: [TensorShape([None]), tensor_shape.unknown_shape(),
                                 TensorShape([None])],
               host=_take_sparse, **_COMMON))


# -- the Python API ----------------------------------------------------------------------------
def _create(op_type, dtype, shape, shared_name, name, reduction_type):
    if reduction_type not in ("MEAN", "SUM"):
        raise ValueError(f"Value for attr 'reduction_type' of {reduction_type!r} is not in "
                         f"the list of allowed values: \"MEAN\", \"SUM\"")
    shape = tensor_shape.as_shape(shape) if shape is not None else tensor_shape.unknown_shape()
    with _graph.get_default_graph().control_dependencies(None):
        ref = apply_op(op_type, name=name, dtype=_dtypes.as_dtype(dtype), shape=shape,
                       shared_name=shared_name or "", reduction_type=reduction_type)
    ref.op._attrs["node_name"] = ref.op.name
    return ref


class ConditionalAccumulatorBase:
    """What both accumulators share: the handle, its name and dtype, the count and the
    global step."""

    def __init__(self, dtype, shape, accumulator_ref):
        self._dtype = _dtypes.as_dtype(dtype)
        self._shape = tensor_shape.TensorShape(shape) if shape is not None \
            else tensor_shape.unknown_shape()
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name.split("/")[-1]

    @property
    def accumulator_ref(self):
        return self._accumulator_ref

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    def num_accumulated(self, name=None):
        """How many gradients are accumulated now (int32)."""
        return apply_op("ResourceAccumulatorNumAccumulated",
                        name=name or f"{self._name}_NumAccumulated",
                        handle=self._accumulator_ref)

    def set_global_step(self, new_global_step, name=None):
        """An op setting the accumulator's global step (gradients of older local steps
        are then dropped)."""
        step = math_ops.cast(convert_to_tensor(new_global_step), _dtypes.int64)
        return apply_op("ResourceAccumulatorSetGlobalStep", name=name,
                        handle=self._accumulator_ref, new_global_step=step)


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates dense gradients (see the module docstring)."""

    def __init__(self, dtype, shape=None, shared_name=None, name="conditional_accumulator",
                 reduction_type="MEAN"):
        ref = _create("ResourceConditionalAccumulator", dtype, shape, shared_name, name,
                      reduction_type)
        super().__init__(dtype, shape, ref)

    def apply_grad(self, grad, local_step=0, name=None):
        """An op adding `grad` unless `local_step` is older than the global step."""
        grad = convert_to_tensor(grad, self._dtype)
        grad.shape.assert_is_compatible_with(self._shape)
        local_step = math_ops.cast(convert_to_tensor(local_step), _dtypes.int64)
        return apply_op("ResourceAccumulatorApplyGradient", name=name,
                        handle=self._accumulator_ref, local_step=local_step, gradient=grad)

    def take_grad(self, num_required, name=None):
        """The mean (or sum) of the gradients; blocks until `num_required` arrived."""
        out = apply_op("ResourceAccumulatorTakeGradient", name=name,
                       handle=self._accumulator_ref, num_required=num_required,
                       dtype=self._dtype)
        out.set_shape(self._shape)
        return out


_IndexedSlicesValue = collections.namedtuple("IndexedSlicesValue",
                                             ["values", "indices", "dense_shape"])


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates sparse gradients (indices, values, dense shape)."""

    def __init__(self, dtype, shape=None, shared_name=None,
                 name="sparse_conditional_accumulator", reduction_type="MEAN"):
        ref = _create("SparseConditionalAccumulator", dtype, shape, shared_name, name,
                      reduction_type)
        super().__init__(dtype, shape, ref)

    def apply_indexed_slices_grad(self, grad, local_step=0, name=None):
        """`apply_grad` of an IndexedSlices' indices, values and dense_shape."""
        return self.apply_grad(grad_indices=grad.indices, grad_values=grad.values,
                               grad_shape=grad.dense_shape, local_step=local_step, name=name)

    def apply_grad(self, grad_indices, grad_values, grad_shape=None, local_step=0, name=None):
        """An op adding the rows `grad_values` at `grad_indices` unless stale."""
        local_step = math_ops.cast(convert_to_tensor(local_step), _dtypes.int64)
        indices = math_ops.cast(convert_to_tensor(grad_indices), _dtypes.int64)
        shape = math_ops.cast(convert_to_tensor([] if grad_shape is None else grad_shape,
                                                dtype=None if grad_shape is not None
                                                else _dtypes.int64), _dtypes.int64)
        return apply_op("SparseAccumulatorApplyGradient", name=name,
                        handle=self._accumulator_ref, local_step=local_step,
                        gradient_indices=indices,
                        gradient_values=convert_to_tensor(grad_values, self._dtype),
                        gradient_shape=shape, has_known_shape=grad_shape is not None)

    def take_grad(self, num_required, name=None):
        """(indices, values, shape) of the averaged gradient; blocks as take_grad does."""
        return apply_op("SparseAccumulatorTakeGradient", name=name,
                        handle=self._accumulator_ref, num_required=num_required,
                        dtype=self._dtype)

    def take_indexed_slices_grad(self, num_required, name=None):
        """take_grad as an (values, indices, dense_shape) IndexedSlices-like record."""
        indices, values, shape = self.take_grad(num_required, name=name)
        return _IndexedSlicesValue(values=values, indices=indices, dense_shape=shape)
