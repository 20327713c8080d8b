"""TF1's optimizers, each a few lines over `Optimizer`: slots plus one fused update op.

Defaults are TF1's (e.g. Adam 0.001/0.9/0.999/1e-8, RMSProp decay 0.9 with its mean
square slot starting at ones, Adagrad and Ftrl accumulators at 0.1).
"""

from __future__ import annotations

from tensorflux._src.framework import graph as _graph
from tensorflux._src.ops.control import control_ops
from tensorflux._src.ops.state import init_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.train.optimizer import Optimizer

__all__ = ["GradientDescentOptimizer", "MomentumOptimizer", "AdamOptimizer",
           "AdagradOptimizer", "AdadeltaOptimizer", "RMSPropOptimizer", "FtrlOptimizer",
           "ProximalGradientDescentOptimizer"]


class GradientDescentOptimizer(Optimizer):
    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _prepare(self):
        self._lr_t = self._hyper(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad, var):
        return apply_op("ApplyGradientDescent", var=var._ref(), alpha=self._cast(self._lr_t, var),
                        delta=grad, use_locking=self._use_locking).op


class MomentumOptimizer(Optimizer):
    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate, self._momentum, self._use_nesterov = (learning_rate, momentum,
                                                                   use_nesterov)

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._lr_t = self._hyper(self._learning_rate, "learning_rate")
        self._momentum_t = self._hyper(self._momentum, "momentum")

    def _apply_dense(self, grad, var):
        return apply_op("ApplyMomentum", var=var._ref(),
                        accum=self.get_slot(var, "momentum")._ref(),
                        lr=self._cast(self._lr_t, var), grad=grad,
                        momentum=self._cast(self._momentum_t, var),
                        use_locking=self._use_locking, use_nesterov=self._use_nesterov).op


class AdamOptimizer(Optimizer):
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, epsilon

    def _get_beta_accumulators(self):
        return (self._get_non_slot_variable("beta1_power"),
                self._get_non_slot_variable("beta2_power"))

    def _create_slots(self, var_list):
        # beta1_power/beta2_power sit beside the first variable, as in TF1.
        self._get_or_make_non_slot("beta1_power", float(self._beta1))
        self._get_or_make_non_slot("beta2_power", float(self._beta2))
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name + "_1")

    def _prepare(self):
        self._lr_t = self._hyper(self._lr, "learning_rate")
        self._beta1_t = self._hyper(self._beta1, "beta1")
        self._beta2_t = self._hyper(self._beta2, "beta2")
        self._epsilon_t = self._hyper(self._epsilon, "epsilon")

    def _apply_dense(self, grad, var):
        beta1_power, beta2_power = self._get_beta_accumulators()
        c = lambda t: self._cast(t, var)  # noqa: E731
        return apply_op("ApplyAdam", var=var._ref(), m=self.get_slot(var, "m")._ref(),
                        v=self.get_slot(var, "v")._ref(), beta1_power=c(beta1_power),
                        beta2_power=c(beta2_power), lr=c(self._lr_t), beta1=c(self._beta1_t),
                        beta2=c(self._beta2_t), epsilon=c(self._epsilon_t), grad=grad,
                        use_locking=self._use_locking).op

    def _finish(self, update_ops, name_scope):
        beta1_power, beta2_power = self._get_beta_accumulators()
        with _graph.control_dependencies(update_ops):
            update_beta1 = beta1_power.assign(beta1_power * self._beta1_t,
                                              use_locking=self._use_locking)
            update_beta2 = beta2_power.assign(beta2_power * self._beta2_t,
                                              use_locking=self._use_locking)
        return control_ops.group(*update_ops, update_beta1, update_beta2, name=name_scope)


class AdagradOptimizer(Optimizer):
    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: "
                             f"{initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate, self._initial = learning_rate, initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot_variable(v, init_ops.constant_initializer(self._initial),
                                "accumulator", self._name)

    def _prepare(self):
        self._lr_t = self._hyper(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad, var):
        return apply_op("ApplyAdagrad", var=var._ref(),
                        accum=self.get_slot(var, "accumulator")._ref(),
                        lr=self._cast(self._lr_t, var), grad=grad,
                        use_locking=self._use_locking).op


class AdadeltaOptimizer(Optimizer):
    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8, use_locking=False,
                 name="Adadelta"):
        super().__init__(use_locking, name)
        self._lr, self._rho, self._epsilon = learning_rate, rho, epsilon

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name + "_1")

    def _prepare(self):
        self._lr_t = self._hyper(self._lr, "lr")
        self._rho_t = self._hyper(self._rho, "rho")
        self._epsilon_t = self._hyper(self._epsilon, "epsilon")

    def _apply_dense(self, grad, var):
        c = lambda t: self._cast(t, var)  # noqa: E731
        return apply_op("ApplyAdadelta", var=var._ref(),
                        accum=self.get_slot(var, "accum")._ref(),
                        accum_update=self.get_slot(var, "accum_update")._ref(),
                        lr=c(self._lr_t), rho=c(self._rho_t), epsilon=c(self._epsilon_t),
                        grad=grad, use_locking=self._use_locking).op


class RMSPropOptimizer(Optimizer):
    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking=False, centered=False, name="RMSProp"):
        super().__init__(use_locking, name)
        self._lr, self._decay, self._momentum = learning_rate, decay, momentum
        self._epsilon, self._centered = epsilon, centered

    def _create_slots(self, var_list):
        for v in var_list:
            # TF1's creation order and names: rms `w/RMSProp`, then (centered) mg
            # `w/RMSProp_1`, then momentum `w/RMSProp_2` (`w/RMSProp_1` when not centered),
            # so checkpoints map each slot to TF1's variable of the same name.
            self._slot_variable(v, init_ops.ones_initializer(), "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._lr_t = self._hyper(self._lr, "learning_rate")
        self._decay_t = self._hyper(self._decay, "decay")
        self._momentum_t = self._hyper(self._momentum, "momentum")
        self._epsilon_t = self._hyper(self._epsilon, "epsilon")

    def _apply_dense(self, grad, var):
        c = lambda t: self._cast(t, var)  # noqa: E731
        common = dict(ms=self.get_slot(var, "rms")._ref(),
                      mom=self.get_slot(var, "momentum")._ref(), lr=c(self._lr_t),
                      rho=c(self._decay_t), momentum=c(self._momentum_t),
                      epsilon=c(self._epsilon_t), grad=grad, use_locking=self._use_locking)
        if self._centered:
            return apply_op("ApplyCenteredRMSProp", var=var._ref(),
                            mg=self.get_slot(var, "mg")._ref(), **common).op
        return apply_op("ApplyRMSProp", var=var._ref(), **common).op


class FtrlOptimizer(Optimizer):
    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="Ftrl", accum_name=None, linear_name=None,
                 l2_shrinkage_regularization_strength=0.0):
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value {initial_accumulator_value} needs to "
                             f"be positive or zero")
        if learning_rate_power > 0.0:
            raise ValueError(f"learning_rate_power {learning_rate_power} needs to be negative "
                             f"or zero")
        for label, value in (("l1_regularization_strength", l1_regularization_strength),
                             ("l2_regularization_strength", l2_regularization_strength),
                             ("l2_shrinkage_regularization_strength",
                              l2_shrinkage_regularization_strength)):
            if value < 0.0:
                raise ValueError(f"{label} {value} needs to be positive or zero")
        super().__init__(use_locking, name)
        self._lr, self._lr_power = learning_rate, learning_rate_power
        self._initial = initial_accumulator_value
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength
        self._l2_shrinkage = l2_shrinkage_regularization_strength
        self._accum_name, self._linear_name = accum_name, linear_name

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot_variable(v, init_ops.constant_initializer(self._initial), "accum",
                                self._accum_name or self._name)
            self._zeros_slot(v, "linear", self._linear_name or self._name + "_1")

    def _prepare(self):
        self._lr_t = self._hyper(self._lr, "learning_rate")
        self._l1_t = self._hyper(self._l1, "l1_regularization_strength")
        self._l2_t = self._hyper(self._l2, "l2_regularization_strength")
        self._l2_shrinkage_t = self._hyper(self._l2_shrinkage,
                                           "l2_shrinkage_regularization_strength")
        self._lr_power_t = self._hyper(self._lr_power, "learning_rate_power")

    def _apply_dense(self, grad, var):
        c = lambda t: self._cast(t, var)  # noqa: E731
        return apply_op("ApplyFtrlV2", var=var._ref(), accum=self.get_slot(var, "accum")._ref(),
                        linear=self.get_slot(var, "linear")._ref(), grad=grad,
                        lr=c(self._lr_t), l1=c(self._l1_t), l2=c(self._l2_t),
                        l2_shrinkage=c(self._l2_shrinkage_t), lr_power=c(self._lr_power_t),
                        use_locking=self._use_locking).op


class ProximalGradientDescentOptimizer(Optimizer):
    def __init__(self, learning_rate, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False,
                 name="ProximalGradientDescent"):
        super().__init__(use_locking, name)
        self._lr, self._l1, self._l2 = (learning_rate, l1_regularization_strength,
                                        l2_regularization_strength)

    def _prepare(self):
        self._lr_t = self._hyper(self._lr, "learning_rate")
        self._l1_t = self._hyper(self._l1, "l1_regularization_strength")
        self._l2_t = self._hyper(self._l2, "l2_regularization_strength")

    def _apply_dense(self, grad, var):
        c = lambda t: self._cast(t, var)  # noqa: E731
        return apply_op("ApplyProximalGradientDescent", var=var._ref(), alpha=c(self._lr_t),
                        l1=c(self._l1_t), l2=c(self._l2_t), delta=grad,
                        use_locking=self._use_locking).op
