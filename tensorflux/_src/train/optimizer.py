"""`tf.train.Optimizer`: compute_gradients / apply_gradients / minimize, slots, global step.

Subclasses (optimizers.py) say which slots a variable needs and which fused update op
applies a gradient: `_apply_dense` for a Tensor, `_apply_sparse` for an IndexedSlices
(the gradient of an embedding lookup), which updates only the rows it names. Names follow
TF1: slots `w/Adam`, `w/Adam_1`; updates under `Adam/update_w/ApplyAdam`; non-slot
variables `beta1_power`.
"""

from __future__ import annotations

from tensorflux._src.autodiff.gradients import gradients
from tensorflux._src.eager.tape import GradientTape
from tensorflux._src.framework.behaviour import executing_eagerly
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.indexed_slices import (IndexedSlices,
                                                      convert_to_tensor_or_indexed_slices)
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops, host_ops
from tensorflux._src.ops.control import control_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.math.segment_ops import unsorted_segment_sum
from tensorflux._src.ops.state import state_ops
from tensorflux._src.ops.state.sparse_training_ops import deduplicate_indexed_slices_padded
from tensorflux._src.train import deferred_restore
from tensorflux._src.train import variable_scope as vs
from tensorflux._src.train.variables import Variable, trainable_variables


class Optimizer:
    """Base class of TF1 optimizers."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots = {}  # slot name -> {variable: slot variable}
        self._non_slot = {}  # (name, graph) -> variable

    def get_name(self):
        return self._name

    # -- the three public steps -------------------------------------------------------------
    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None):
        """compute_gradients + apply_gradients; returns the training op."""
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        vars_with_grad = [v for g, v in grads_and_vars if g is not None]
        if not vars_with_grad:
            raise ValueError(f"No gradients provided for any variable, check your graph for ops "
                             f"that do not support gradients, between variables "
                             f"{[str(v) for _, v in grads_and_vars]} and loss {loss}.")
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """A list of (gradient, variable) pairs; gradient is None where loss ignores it."""
        if gate_gradients not in (self.GATE_NONE, self.GATE_OP, self.GATE_GRAPH):
            raise ValueError(f"gate_gradients must be one of: Optimizer.GATE_NONE, "
                             f"Optimizer.GATE_OP, Optimizer.GATE_GRAPH.  Not {gate_gradients}")
        if executing_eagerly():
            return self._compute_gradients_eagerly(loss, var_list, grad_loss)
        if callable(loss):
            loss = loss()
        loss = convert_to_tensor(loss)
        self._assert_valid_dtypes([loss])
        if var_list is None:
            var_list = trainable_variables() + _graph.get_collection(
                GraphKeys.TRAINABLE_RESOURCE_VARIABLES)
        else:
            var_list = list(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        self._assert_valid_dtypes([v for v in var_list])
        grads = gradients(loss, var_list, grad_ys=grad_loss,
                          gate_gradients=gate_gradients == self.GATE_OP,
                          aggregation_method=aggregation_method,
                          colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gate_gradients == self.GATE_GRAPH:
            grads = control_ops.tuple(grads)
        return list(zip(grads, var_list))

    def _compute_gradients_eagerly(self, loss, var_list, grad_loss):
        """TF1 eager: `loss` must be a callable, run under a GradientTape; without
        var_list, the trainable variables it read are differentiated."""
        if not callable(loss):
            raise RuntimeError("`loss` passed to Optimizer.compute_gradients should be a "
                               "function when eager execution is enabled.")
        with GradientTape() as tape:
            if var_list is not None:
                tape.watch(list(var_list))
            loss_value = loss()
        if var_list is None:
            var_list = [v for v in tape.watched_variables() if v.trainable]
        else:
            var_list = list(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        self._assert_valid_dtypes([convert_to_tensor(loss_value)])
        grads = tape.gradient(loss_value, var_list,
                              output_gradients=None if grad_loss is None else [grad_loss])
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Applies the gradients; increments `global_step` afterwards if given."""
        recorder = apply_gradients_recorder()
        if recorder is not None:
            return recorder(self, tuple(grads_and_vars), global_step, name)
        return self._apply_gradients(grads_and_vars, global_step, name)

    def _apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in grads_and_vars:
            if g is not None:
                try:
                    g = convert_to_tensor_or_indexed_slices(g)
                except TypeError:
                    raise TypeError(f"Gradient must be convertible to a Tensor or "
                                    f"IndexedSlices, or None: {g}") from None
            if not isinstance(v, Variable):
                raise TypeError(f"Unsupported variable type {type(v).__name__}: optimizers "
                                f"update tf.Variable objects")
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError(f"No gradients provided for any variable: "
                             f"{[str(v) for _, v in converted]}.")
        with _graph.control_dependencies(None):
            self._create_slots(var_list)
        if deferred_restore._pending and executing_eagerly():
            deferred_restore.objects_created()  # an eager Checkpoint.restore's slots
        update_ops = []
        with _graph.name_scope(name, self._name) as scope:
            self._prepare()
            for grad, var in converted:
                if grad is None:
                    continue
                with _graph.name_scope("update_" + var.op.name):
                    if isinstance(grad, IndexedSlices):
                        if getattr(var, "_constraint", None) is not None:
                            raise RuntimeError("Cannot use a constraint function on a sparse "
                                               "variable.")
                        update_ops.append(self._apply_sparse_duplicate_indices(grad, var))
                    else:
                        update_ops.append(self._apply_dense(grad, var))
            if global_step is None:
                apply_updates = self._finish(update_ops, scope)
            else:
                with _graph.control_dependencies([self._finish(update_ops, "update")]):
                    apply_updates = state_ops.assign_add(global_step, 1, name=scope).op
        train_ops = _graph.get_collection_ref(GraphKeys.TRAIN_OP)
        if apply_updates not in train_ops:
            train_ops.append(apply_updates)
        return apply_updates

    # -- slots ------------------------------------------------------------------------------
    def get_slot(self, var, name):
        return self._slots.get(name, {}).get(var)

    def get_slot_names(self):
        return sorted(self._slots)

    def variables(self):
        slots = [s for by_var in self._slots.values() for s in by_var.values()]
        return list(self._non_slot.values()) + slots

    def _slot_variable(self, var, initializer, slot_name, var_name):
        """Creates the slot `var.op.name/var_name`, as TF1's slot_creator names it."""
        by_var = self._slots.setdefault(slot_name, {})
        if var not in by_var:
            # As TF's slot_creator: the slot lives with its variable (same device).
            with _graph.name_scope(None), _graph.device(None), _graph.device(var.device):
                slot = by_var[var] = Variable(
                    lambda: initializer(var.shape.as_list(), dtype=var.dtype.base_dtype),
                    name=f"{var.op.name}/{var_name}", trainable=False,
                    dtype=var.dtype.base_dtype)
            info = var._get_save_slice_info()
            if info is not None:
                # TF1's slot_creator: the slot of a partition is the same slice of a
                # partitioned slot named `<full name>/<slot>` (`dense/kernel/Adam`, not
                # `dense/kernel/part_0/Adam`), so checkpoints name slots as TF's do.
                slot._set_save_slice_info(Variable.SaveSliceInfo(
                    f"{info.full_name}/{var_name}", info.full_shape, info.var_offset,
                    info.var_shape))
        return by_var[var]

    def _zeros_slot(self, var, slot_name, var_name):
        from tensorflux._src.ops.state.init_ops import zeros_initializer
        return self._slot_variable(var, zeros_initializer(), slot_name, var_name)

    def _get_or_make_non_slot(self, name, initial_value):
        graph = _graph.get_default_graph()
        if getattr(graph, "lift_variables", False):  # traced by tf.function: made eagerly
            graph = graph.outer_graph
        key = (name, graph)
        if key not in self._non_slot:
            with _graph.name_scope(None):
                self._non_slot[key] = Variable(initial_value, name=name, trainable=False)
        return self._non_slot[key]

    def _get_non_slot_variable(self, name, graph=None):
        graph = graph or _graph.get_default_graph()
        if getattr(graph, "lift_variables", False):
            graph = graph.outer_graph
        return self._non_slot.get((name, graph))

    # -- hooks for subclasses ------------------------------------------------------------------
    def _create_slots(self, var_list):
        pass

    def _prepare(self):
        pass

    def _apply_dense(self, grad, var):
        raise NotImplementedError(f"{type(self).__name__} must implement _apply_dense")

    def _apply_sparse_duplicate_indices(self, grad, var):
        """Applies an IndexedSlices gradient whose indices may repeat: as TF1, the values
        of a repeated index are summed first, then `_apply_sparse` runs.

        TF's deduplication (Unique) has a data-dependent size, so a step would compile
        once per distinct count; `_apply_sparse` functions marked `handles_duplicates`
        (the built-in optimizers', whose sparse records sum repeats themselves) get the
        gradient as it is, and those marked `handles_padded` (Adam's, which only
        scatter-adds) a static-shape deduplication padded with zero rows."""
        apply_sparse = type(self)._apply_sparse
        if getattr(apply_sparse, "handles_duplicates", False):
            return self._apply_sparse(grad, var)
        if getattr(apply_sparse, "handles_padded", False):
            summed, unique = deduplicate_indexed_slices_padded(grad.values, grad.indices)
        else:
            summed, unique = _deduplicate_indexed_slices(grad.values, grad.indices)
        return self._apply_sparse(IndexedSlices(summed, unique, grad.dense_shape), var)

    def _apply_sparse(self, grad, var):
        """Applies an IndexedSlices gradient with unique indices to `var`."""
        raise NotImplementedError()

    def _finish(self, update_ops, name_scope):
        return control_ops.group(*update_ops, name=name_scope)

    def _hyper(self, value, name):
        """A hyperparameter as a tensor (created once per apply_gradients)."""
        value = value() if callable(value) else value
        return convert_to_tensor(value, name=name)

    @staticmethod
    def _cast(t, var):
        return math_ops.cast(t, var.dtype.base_dtype)

    @staticmethod
    def _assert_valid_dtypes(tensors):
        valid = (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64)
        for t in tensors:
            dtype = t.dtype.base_dtype
            if dtype not in valid:
                raise ValueError(f"Invalid type {dtype!r} for {t.name}, expected: "
                                 f"{list(valid)}.")


def _deduplicate_indexed_slices(values, indices):
    """(summed values, unique indices): TF1's helper, with Unique's exact sizes."""
    unique_indices, new_index_positions = host_ops.unique(indices)
    summed_values = unsorted_segment_sum(values, new_index_positions,
                                         array_ops.shape(unique_indices)[0])
    return summed_values, unique_indices


# -- global step ------------------------------------------------------------------------------
def get_global_step(graph=None):
    graph = graph or _graph.get_default_graph()
    found = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(found) > 1:
        raise TypeError("Multiple tensors in global_step collection.")
    if found:
        return found[0]
    try:
        tensor = graph.get_tensor_by_name("global_step:0")
    except (KeyError, ValueError):
        return None
    return tensor if tensor.dtype.base_dtype.is_integer else None


def apply_gradients_recorder():
    """The default graph's apply_gradients recorder, or None (the usual case).

    Parameter-server training of an Estimator (estimator/ps_model_fn.py) builds the
    user's model_fn in a graph carrying a recorder: `apply_gradients` then hands the
    (gradient, variable) pairs to it instead of building the update, so the workers
    fetch exactly the gradients the model_fn computed (clipped, scaled, ...) and each
    ps task applies the user's own optimizer to its shard. The recorder lives on the
    graph, not in a global, so other graphs and threads are untouched."""
    return getattr(_graph.get_default_graph(), "_apply_gradients_recorder", None)


def create_global_step(graph=None):
    graph = graph or _graph.get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    from tensorflux._src.ops.state.init_ops import zeros_initializer
    with graph.as_default(), graph.name_scope(None):
        return vs.get_variable(GraphKeys.GLOBAL_STEP, shape=[], dtype=_dtypes.int64,
                               initializer=zeros_initializer(), trainable=False,
                               collections=[GraphKeys.GLOBAL_VARIABLES,
                                            GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph=None):
    graph = graph or _graph.get_default_graph()
    step = get_global_step(graph)
    return step if step is not None else create_global_step(graph)


def assert_global_step(global_step_tensor):
    """Raises TypeError unless `global_step_tensor` is an integer scalar Variable or
    Tensor (a shape that is not fully defined passes, as in TF1)."""
    if not isinstance(global_step_tensor, (Variable, Tensor)):
        raise TypeError(f"Existing \"global_step\" must be a Variable or Tensor: "
                        f"{global_step_tensor}.")
    if not global_step_tensor.dtype.base_dtype.is_integer:
        raise TypeError(f"Existing \"global_step\" does not have integer type: "
                        f"{global_step_tensor.dtype}")
    shape = global_step_tensor.get_shape()
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError(f"Existing \"global_step\" is not scalar: {shape}")
