"""`tf.train.experimental`'s loss scaling (TF 1.15): `LossScale`, `FixedLossScale`,
`DynamicLossScale`, `MixedPrecisionLossScaleOptimizer` and
`enable/disable_mixed_precision_graph_rewrite`.

The optimizer wrapper multiplies the loss by the loss scale before differentiating and
divides the gradients by it. With a DynamicLossScale, `apply_gradients` applies the
gradients only when all are finite (a `tf.cond`), and updates the scale: after
`increment_period` finite steps it is multiplied by `multiplier` (if that stays finite);
a step with a non-finite gradient divides it by `multiplier` (not below 1) and skips
the update. The scale lives in the variables `current_loss_scale` and `good_steps`.

`enable_mixed_precision_graph_rewrite(opt)` wraps `opt` and sets Grappler's
`auto_mixed_precision` option, as TF1.15. That rewrite (casting eligible ops to float16)
is Grappler's and runs in TF1.15 only for GPU graphs; tensorflux compiles through XLA
and does no such rewrite, so the graph keeps its dtypes and only the loss scaling
applies (what TF1.15 does on a machine without GPUs). Use float16/bfloat16 tensors or a
custom getter (models/precision.py) to compute in lower precision.
"""

from __future__ import annotations

import abc
import logging

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.control import control_ops
from tensorflux._src.ops.control.control_flow_ops import cond
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.shape_fns import static_value
from tensorflux._src.runtime import tf_config
from tensorflux._src.train.optimizer import Optimizer
from tensorflux._src.train.variables import Variable

__all__ = ["LossScale", "FixedLossScale", "DynamicLossScale",
           "MixedPrecisionLossScaleOptimizer", "enable_mixed_precision_graph_rewrite",
           "disable_mixed_precision_graph_rewrite"]

_log = logging.getLogger("tensorflux")


class LossScale(abc.ABC):
    """Base class: `loss_scale()` is the current scale (float32 scalar) and
    `update(grads)` returns (update op, whether to apply the gradients)."""

    def __init__(self):
        self._weights = {}

    @abc.abstractmethod
    def __call__(self):
        """The current loss scale as a scalar float32 tensor."""

    @abc.abstractmethod
    def update(self, grads):
        """(update_op, should_apply_gradients) for these gradients."""

    def _add_weight(self, name, initial_value, dtype=None):
        """A non-trainable variable of this loss scale (one per name and graph)."""
        graph = _graph.get_default_graph()
        key = (name, graph)
        if self._weights.get(key) is not None:
            raise RuntimeError(f"Duplicate variables detected. {key}")
        with _graph.control_dependencies(None):
            variable = Variable(initial_value, name=name, dtype=dtype, trainable=False)
        self._weights[key] = variable
        return variable

    @abc.abstractmethod
    def get_config(self):
        """The constructor arguments, as a dict."""

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class FixedLossScale(LossScale):
    """A loss scale that never changes."""

    def __init__(self, loss_scale_value):
        super().__init__()
        if isinstance(loss_scale_value, bool) or not isinstance(loss_scale_value, (int, float)):
            raise ValueError("loss_scale_value must be a Python int or float.")
        if loss_scale_value < 1:
            raise ValueError("loss_scale_value must be at least 1.")
        self._loss_scale_value = float(loss_scale_value)

    def __call__(self):
        return convert_to_tensor(self._loss_scale_value)

    def update(self, grads):
        del grads
        return control_ops.no_op(), True

    def get_config(self):
        return {"loss_scale_value": self._loss_scale_value}


def _is_all_finite(grads):
    """A bool scalar: every element of every gradient is finite."""
    finite = [reduce_ops.reduce_all(math_ops.is_finite(g)) for g in grads if g is not None]
    return reduce_ops.reduce_all(finite)


def _assign_if_finite(var, value):
    return cond(math_ops.is_finite(value), lambda: var.assign(value).op, control_ops.no_op)


class DynamicLossScale(LossScale):
    """A loss scale that grows after `increment_period` finite steps and shrinks on a
    non-finite one (see the module docstring)."""

    def __init__(self, initial_loss_scale=2 ** 15, increment_period=2000, multiplier=2.):
        super().__init__()
        self._initial_loss_scale = float(initial_loss_scale)
        self._increment_period = int(increment_period)
        self._multiplier = float(multiplier)
        self._current_loss_scale = self._add_weight(
            name="current_loss_scale", dtype=_dtypes.float32,
            initial_value=self._initial_loss_scale)
        # Finite steps in a row since the last non-finite one or change of scale.
        self._num_good_steps = self._add_weight(name="good_steps", dtype=_dtypes.int64,
                                                initial_value=0)

    @property
    def initial_loss_scale(self):
        return self._initial_loss_scale

    @property
    def increment_period(self):
        return self._increment_period

    @property
    def multiplier(self):
        return self._multiplier

    def __call__(self):
        return self._current_loss_scale

    def update(self, grads):
        grads = [g for g in _flatten(grads)]
        is_finite = _is_all_finite(grads)

        def update_if_finite_grads():
            def incr_loss_scale():
                new_loss_scale = self._current_loss_scale * self._multiplier
                return control_ops.group(_assign_if_finite(self._current_loss_scale,
                                                           new_loss_scale),
                                         self._num_good_steps.assign(0))
            return cond(self._num_good_steps + 1 >= self._increment_period, incr_loss_scale,
                        lambda: self._num_good_steps.assign_add(1).op)

        def update_if_not_finite_grads():
            new_loss_scale = math_ops.maximum(self._current_loss_scale / self._multiplier, 1)
            return control_ops.group(self._num_good_steps.assign(0),
                                     self._current_loss_scale.assign(new_loss_scale))

        update_op = cond(is_finite, update_if_finite_grads, update_if_not_finite_grads)
        return update_op, is_finite

    def get_config(self):
        return {"initial_loss_scale": self.initial_loss_scale,
                "increment_period": self.increment_period, "multiplier": self.multiplier}


def _flatten(grads):
    if isinstance(grads, (list, tuple)):
        return [x for g in grads for x in _flatten(g)]
    if isinstance(grads, dict):
        return [x for k in sorted(grads) for x in _flatten(grads[k])]
    return [grads]


def get(identifier):
    """A LossScale from a number (fixed), "dynamic", a LossScale or None."""
    if isinstance(identifier, (int, float)) and not isinstance(identifier, bool):
        return FixedLossScale(identifier)
    if identifier == "dynamic":
        return DynamicLossScale()
    if isinstance(identifier, LossScale):
        return identifier
    if identifier is None:
        return None
    raise ValueError(f"Could not interpret loss scale identifier: {identifier}")


class MixedPrecisionLossScaleOptimizer(Optimizer):
    """Wraps an Optimizer with loss scaling (see the module docstring)."""

    def __init__(self, opt, loss_scale):
        if not isinstance(opt, Optimizer):
            raise ValueError(f'"opt" must be an instance of Optimizer, but got: {type(opt)}')
        self._optimizer = opt
        super().__init__(opt._use_locking, opt.get_name())
        self._loss_scale = get(loss_scale)
        if self._loss_scale is None:
            raise ValueError("loss_scale cannot be None")

    def _doing_dynamic_loss_scaling(self):
        return isinstance(self._loss_scale, DynamicLossScale)

    def compute_gradients(self, loss, var_list=None, gate_gradients=Optimizer.GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """The wrapped optimizer's gradients of loss * loss_scale, divided by loss_scale."""
        loss = self._scale_loss(loss)
        grads_and_vars = self._optimizer.compute_gradients(
            loss=loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        grads = [g for g, _ in grads_and_vars]
        variables = [v for _, v in grads_and_vars]
        return list(zip(self._unscale_grads(grads), variables))

    def _scale_loss(self, loss):
        loss_scale = self._loss_scale()
        if callable(loss):
            def new_loss():
                loss_val = loss()
                return loss_val * math_ops.cast(loss_scale, loss_val.dtype)
            return new_loss
        loss = convert_to_tensor(loss)
        return loss * math_ops.cast(loss_scale, loss.dtype)

    def _unscale_grads(self, grads):
        reciprocal = 1 / self._loss_scale()
        return [None if g is None else g * math_ops.cast(reciprocal, g.dtype) for g in grads]

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The wrapped optimizer's apply_gradients; with dynamic loss scaling only when
        every gradient is finite, grouped with the scale's update."""
        if not self._doing_dynamic_loss_scaling():
            return self._optimizer.apply_gradients(grads_and_vars, global_step, name)
        grads_and_vars = tuple(grads_and_vars)
        name = name if name is not None else self.get_name()
        grads = [g for g, _ in grads_and_vars]
        loss_scale_update_op, should_apply_grads = self._loss_scale.update(grads)

        def apply_fn():
            return self._optimizer.apply_gradients(grads_and_vars, global_step,
                                                   name + "-wrapped")

        known = static_value(should_apply_grads) if not isinstance(
            should_apply_grads, bool) else should_apply_grads
        if known is None:
            maybe_apply_op = cond(should_apply_grads, apply_fn, control_ops.no_op)
        else:  # TF's smart_cond
            maybe_apply_op = apply_fn() if bool(known) else control_ops.no_op()
        return control_ops.group(maybe_apply_op, loss_scale_update_op, name=name)

    def _apply_dense(self, grad, var):
        raise RuntimeError("This function should never be called")

    def variables(self):
        """The wrapped optimizer's variables and the loss scale's."""
        return self._optimizer.variables() + list(self._loss_scale._weights.values())

    def get_slot(self, var, name):
        return self._optimizer.get_slot(var, name)

    def get_slot_names(self):
        return self._optimizer.get_slot_names()


_rewrite_enabled = [False]


def enable_mixed_precision_graph_rewrite(opt, loss_scale="dynamic"):
    """`opt` wrapped in a MixedPrecisionLossScaleOptimizer; sets Grappler's
    auto_mixed_precision option (no rewrite happens here: see the module docstring)."""
    if isinstance(opt, MixedPrecisionLossScaleOptimizer):
        raise ValueError('"opt" must not already be an instance of a '
                         'MixedPrecisionLossScaleOptimizer. '
                         '`enable_mixed_precision_graph_rewrite` will automatically wrap the '
                         'optimizer with a MixedPrecisionLossScaleOptimizer.')
    if not isinstance(opt, Optimizer):
        raise ValueError(f'"opt" must be an instance of a tf.train.Optimizer or a '
                         f'tf.keras.optimizers.Optimizer, but got: {opt}')
    opt = MixedPrecisionLossScaleOptimizer(opt, loss_scale)
    tf_config.set_optimizer_experimental_options({"auto_mixed_precision": True})
    _rewrite_enabled[0] = True
    return opt


def disable_mixed_precision_graph_rewrite():
    """Clears the auto_mixed_precision option set by enable_..."""
    if not _rewrite_enabled[0]:
        _log.warning("disable_mixed_precision_graph_rewrite() called when mixed precision is "
                     "already disabled.")
    tf_config.set_optimizer_experimental_options({"auto_mixed_precision": False})
    _rewrite_enabled[0] = False
