"""`tf.train.ExponentialMovingAverage` and `assign_moving_average` (TF1's rules and names).

`ema.apply([v])` creates the shadow variable `v/ExponentialMovingAverage` (a slot made by
get_variable in the variable scope `v/ExponentialMovingAverage`, uniquified by a second
EMA to `..._1`), initialized to `v.initialized_value()`, and returns the op group
`ExponentialMovingAverage` that runs `shadow -= (1 - decay) * (shadow - v)` for every
variable. A Tensor's shadow starts at zeros; with `zero_debias=True` it is debiased with
the extra variables `<shadow>/biased` and `<shadow>/local_step`. `num_updates` lowers the
decay early on: `min(decay, (1 + n) / (10 + n))`.
"""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.control import control_ops
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.state import init_ops, state_ops
from tensorflux._src.train import variable_scope as vs
from tensorflux._src.train.variables import Variable, global_variables, \
    moving_average_variables, trainable_variables

__all__ = ["ExponentialMovingAverage"]

_FLOATS = (_dtypes.bfloat16, _dtypes.float16, _dtypes.float32, _dtypes.float64)


def assign_moving_average(variable, value, decay, zero_debias=True, name=None):
    """`variable -= (1 - decay) * (variable - value)`; debiased for zero-initialized
    averages when `zero_debias` (Kingma et al.'s 1 - decay^t factor)."""
    with _graph.name_scope(name, "AssignMovingAvg", [variable, value, decay]) as scope:
        one_minus = convert_to_tensor(1.0 - decay, name="decay")
        if one_minus.dtype != variable.dtype.base_dtype:
            one_minus = math_ops.cast(one_minus, variable.dtype.base_dtype)
        if zero_debias:
            return _zero_debias(variable, value, one_minus)
        return state_ops.assign_sub(variable, (variable - value) * one_minus, name=scope)


def _zero_debias(unbiased_var, value, one_minus_decay):
    """Keeps a biased average and an update count next to `unbiased_var` and assigns it
    `biased / (1 - decay^count)`."""
    with vs.variable_scope(unbiased_var.op.name, values=[unbiased_var, value,
                                                          one_minus_decay]):
        with _graph.device(None), _graph.device(unbiased_var.device):
            biased = vs.get_variable(_unique_in_scope("biased"), initializer=init_ops
                                     .zeros_initializer(), shape=unbiased_var.shape,
                                     dtype=unbiased_var.dtype.base_dtype, trainable=False)
            local_step = vs.get_variable(_unique_in_scope("local_step"), shape=[],
                                         dtype=unbiased_var.dtype.base_dtype,
                                         initializer=init_ops.zeros_initializer(),
                                         trainable=False)
        update_biased = state_ops.assign_sub(biased, (biased - value) * one_minus_decay)
        update_step = state_ops.assign_add(local_step, 1)
        bias_factor = 1 - math_ops.pow(1.0 - one_minus_decay, update_step)
        return state_ops.assign(unbiased_var, update_biased / bias_factor,
                                name=_graph.get_default_graph().get_name_scope() + "/")


def _unique_in_scope(name):
    """`name`, or `name_<i>` when the scope already holds a variable of that name (TF1)."""
    scope = vs.get_variable_scope()
    if scope.reuse:
        return name
    existing = {v.op.name for v in scope.global_variables()}
    full = f"{scope.name}/{name}"
    if full not in existing:
        return name
    i = 1
    while f"{full}_{i}" in existing:
        i += 1
    return f"{name}_{i}"


def _create_slot(primary, value, name, zeros_shape=None):
    """A non-trainable variable named `<primary op>/<name>` next to `primary` (TF1's
    slot_creator: get_variable("") in the variable scope of that name)."""
    with vs.variable_scope(None, f"{primary.op.name}/{name}"):
        scope = vs.get_variable_scope()
        saved_partitioner = scope.partitioner
        scope.set_partitioner(None)
        try:
            with _graph.device(None), _graph.device(primary.device):
                if zeros_shape is not None:
                    return vs.get_variable("", shape=zeros_shape, dtype=value,
                                           initializer=init_ops.zeros_initializer(),
                                           trainable=False)
                return vs.get_variable("", initializer=value, trainable=False,
                                       validate_shape=value.shape.is_fully_defined())
        finally:
            scope.set_partitioner(saved_partitioner)


class ExponentialMovingAverage:
    """Shadow copies of variables (or tensors) that follow them with exponential decay."""

    def __init__(self, decay, num_updates=None, zero_debias=False,
                 name="ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages = {}  # Reference of a variable or tensor -> its shadow Variable

    @property
    def name(self):
        return self._name

    def apply(self, var_list=None):
        """Creates the shadow variables (once per variable) and returns the op updating
        them all from the current values of `var_list` (default: trainable variables)."""
        if var_list is None:
            var_list = trainable_variables()
        debiased = set()
        for var in var_list:
            if var.dtype.base_dtype not in _FLOATS:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            key = var.ref()
            if key in self._averages:
                continue
            with _graph.control_dependencies(None):
                if isinstance(var, Variable):
                    avg = _create_slot(var, var.initialized_value(), self._name)
                    # Only Variables join MOVING_AVERAGE_VARIABLES, as in TF1.
                    _graph.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
                else:
                    avg = _create_slot(var, var.dtype.base_dtype, self._name,
                                       zeros_shape=var.shape)
                    if self._zero_debias:
                        debiased.add(avg.ref())
            self._averages[key] = avg
        with _graph.name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, name="decay")
            if self._num_updates is not None:
                num_updates = math_ops.cast(self._num_updates, _dtypes.float32,
                                            name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + num_updates) / (10.0 + num_updates))
            updates = []
            for var in var_list:
                avg = self._averages[var.ref()]
                updates.append(assign_moving_average(avg, var, decay,
                                                     zero_debias=avg.ref() in debiased))
            return control_ops.group(*updates, name=scope)

    def average(self, var):
        """The shadow Variable of `var`, or None if `var` has none."""
        return self._averages.get(var.ref())

    def average_name(self, var):
        """The name `var`'s shadow has, or will have once `apply` creates it."""
        if var.ref() in self._averages:
            return self._averages[var.ref()].op.name
        return _graph.get_default_graph().unique_name(f"{var.op.name}/{self._name}",
                                                      mark_as_used=False)

    def variables_to_restore(self, moving_avg_variables=None):
        """{name to restore from: variable}: shadow names for averaged variables (default:
        trainable and MOVING_AVERAGE_VARIABLES), the variable's own name for the rest."""
        name_map = {}
        if moving_avg_variables is None:
            moving_avg_variables = trainable_variables() + moving_average_variables()
        moving_avg_variables = list(dict.fromkeys(moving_avg_variables))
        for v in moving_avg_variables:
            name_map[self.average_name(v)] = v
        averaged_names = {v.name for v in moving_avg_variables}
        for v in global_variables():
            if v.name not in averaged_names and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map
