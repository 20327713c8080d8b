"""TF1's optimizers, each a few lines over `Optimizer`: slots plus one fused update op.

Defaults are TF1's (e.g. Adam 0.001/0.9/0.999/1e-8, RMSProp decay 0.9 with its mean
square slot starting at ones, Adagrad and Ftrl accumulators at 0.1).

Sparse gradients (IndexedSlices) go to `_apply_sparse`, TF1's sparse update per
optimizer: a SparseApply* record (sparse_training_ops.py) that updates only the rows
named, GradientDescent's scatter_sub, and Adam's dense decay of m and v plus a
scatter_add of the new gradient terms (TF1's AdamOptimizer is not lazy: every row of
m, v and the variable moves each step).
"""

from __future__ import annotations

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.indexed_slices import IndexedSlices
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.control import control_ops
from tensorflux._src.ops.math import indexed_slices_ops, math_ops
from tensorflux._src.ops.state import init_ops, sparse_training_ops, state_ops  # noqa: F401
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.train.optimizer import Optimizer

__all__ = ["GradientDescentOptimizer", "MomentumOptimizer", "AdamOptimizer",
           "AdagradOptimizer", "AdadeltaOptimizer", "RMSPropOptimizer", "FtrlOptimizer",
           "ProximalGradientDescentOptimizer", "AdagradDAOptimizer",
           "ProximalAdagradOptimizer"]


def _handles_duplicates(apply_sparse):
    """Marks an `_apply_sparse` whose record sums repeated indices itself, so the base
    class skips its deduplication (see Optimizer._apply_sparse_duplicate_indices)."""
    apply_sparse.handles_duplicates = True
    return apply_sparse


def _sparse(op_type, grad, **inputs):
    return apply_op(op_type, grad=grad.values, indices=grad.indices, **inputs).op


class GradientDescentOptimizer(Optimizer):
    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _prepare(self):
        self._lr_t = self._hyper(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad, var):
        return apply_op("ApplyGradientDescent", var=var._ref(), alpha=self._cast(self._lr_t, var),
                        delta=grad, use_locking=self._use_locking).op

    def _apply_sparse_duplicate_indices(self, grad, var):
        # TF1: var.scatter_sub of lr * values; repeated indices accumulate in the scatter.
        delta = IndexedSlices(grad.values * self._cast(self._lr_t, var), grad.indices,
                              grad.dense_shape)
        return var.scatter_sub(delta, use_locking=self._use_locking)


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

    @_handles_duplicates
    def _apply_sparse(self, grad, var):
        return _sparse("SparseApplyMomentum", grad, var=var._ref(),
                       accum=self.get_slot(var, "momentum")._ref(),
                       lr=self._cast(self._lr_t, var),
                       momentum=self._cast(self._momentum_t, var),
                       use_locking=self._use_locking, use_nesterov=self._use_nesterov)


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

    def _apply_sparse_shared(self, grad, var, indices, scatter_add):
        # TF1's formulas: every row of m and v decays, the gradient's rows are added.
        beta1_power, beta2_power = self._get_beta_accumulators()
        c = lambda t: self._cast(t, var)  # noqa: E731
        beta1_power, beta2_power = c(beta1_power), c(beta2_power)
        lr_t, beta1_t, beta2_t = c(self._lr_t), c(self._beta1_t), c(self._beta2_t)
        epsilon_t = c(self._epsilon_t)
        lr = lr_t * math_ops.sqrt(1 - beta2_power) / (1 - beta1_power)
        m = self.get_slot(var, "m")
        m_scaled_g_values = grad * (1 - beta1_t)
        m_t = state_ops.assign(m, m * beta1_t, use_locking=self._use_locking)
        with _graph.control_dependencies([m_t]):
            m_t = scatter_add(m, indices, m_scaled_g_values)
        v = self.get_slot(var, "v")
        v_scaled_g_values = (grad * grad) * (1 - beta2_t)
        v_t = state_ops.assign(v, v * beta2_t, use_locking=self._use_locking)
        with _graph.control_dependencies([v_t]):
            v_t = scatter_add(v, indices, v_scaled_g_values)
        v_sqrt = math_ops.sqrt(v_t)
        var_update = state_ops.assign_sub(var, lr * m_t / (v_sqrt + epsilon_t),
                                          use_locking=self._use_locking)
        return control_ops.group(var_update, m_t, v_t)

    def _apply_sparse_duplicate_indices(self, grad, var):
        """TF1's sparse Adam (`_apply_sparse_shared`) decays every row of m and v and
        moves every row of var; only the gradient's rows are sparse. So it is the dense
        update of the gradient's dense form, whose segment sum adds repeated rows as
        TF's deduplication does. Compiled, that is one scatter into zeros and one fused
        pass over var, m and v, where the sparse form sorts the indices, scatters three
        times and passes over the variable's size five times: a tied 50k x 768
        embedding's update took ~0.3 s of a Transformer LM's step that way. A subclass
        with its own `_apply_sparse` (a lazy Adam that skips untouched rows) keeps it."""
        rows = var.shape.as_list()[0] if var.shape.ndims else None
        if rows is None and grad.dense_shape is not None:
            rows = grad.dense_shape[0]
        if type(self)._apply_sparse is not AdamOptimizer._apply_sparse or rows is None:
            return super()._apply_sparse_duplicate_indices(grad, var)
        return self._apply_dense(indexed_slices_ops.dense_sum(grad, rows), var)

    def _apply_sparse(self, grad, var):
        return self._apply_sparse_shared(
            grad.values, var, grad.indices,
            lambda x, i, v: state_ops.scatter_add(x, i, v, use_locking=self._use_locking))

    # Only scatter-adds use the deduplicated rows, so zero padding rows are harmless.
    _apply_sparse.handles_padded = True

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

    @_handles_duplicates
    def _apply_sparse(self, grad, var):
        return _sparse("SparseApplyAdagrad", grad, var=var._ref(),
                       accum=self.get_slot(var, "accumulator")._ref(),
                       lr=self._cast(self._lr_t, var), use_locking=self._use_locking)


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

    def _slots_and_hypers(self, var):
        c = lambda t: self._cast(t, var)  # noqa: E731
        return dict(var=var._ref(), accum=self.get_slot(var, "accum")._ref(),
                    accum_update=self.get_slot(var, "accum_update")._ref(),
                    lr=c(self._lr_t), rho=c(self._rho_t), epsilon=c(self._epsilon_t),
                    use_locking=self._use_locking)

    def _apply_dense(self, grad, var):
        return apply_op("ApplyAdadelta", grad=grad, **self._slots_and_hypers(var)).op

    @_handles_duplicates
    def _apply_sparse(self, grad, var):
        return _sparse("SparseApplyAdadelta", grad, **self._slots_and_hypers(var))


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

    @_handles_duplicates
    def _apply_sparse(self, grad, var):
        c = lambda t: self._cast(t, var)  # noqa: E731
        common = dict(ms=self.get_slot(var, "rms")._ref(),
                      mom=self.get_slot(var, "momentum")._ref(), lr=c(self._lr_t),
                      rho=c(self._decay_t), momentum=c(self._momentum_t),
                      epsilon=c(self._epsilon_t), use_locking=self._use_locking)
        if self._centered:
            return _sparse("SparseApplyCenteredRMSProp", grad, var=var._ref(),
                           mg=self.get_slot(var, "mg")._ref(), **common)
        return _sparse("SparseApplyRMSProp", grad, var=var._ref(), **common)


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

    def _inputs(self, var):
        # TF1 uses the V2 op (with l2_shrinkage) only when there is shrinkage.
        c = lambda t: self._cast(t, var)  # noqa: E731
        inputs = dict(var=var._ref(), accum=self.get_slot(var, "accum")._ref(),
                      linear=self.get_slot(var, "linear")._ref(), lr=c(self._lr_t),
                      l1=c(self._l1_t), l2=c(self._l2_t), lr_power=c(self._lr_power_t),
                      use_locking=self._use_locking)
        if self._l2_shrinkage > 0.0:
            inputs["l2_shrinkage"] = c(self._l2_shrinkage_t)
        return inputs

    def _apply_dense(self, grad, var):
        inputs = self._inputs(var)
        op_type = "ApplyFtrlV2" if "l2_shrinkage" in inputs else "ApplyFtrl"
        return apply_op(op_type, grad=grad, **inputs).op

    @_handles_duplicates
    def _apply_sparse(self, grad, var):
        inputs = self._inputs(var)
        op_type = "SparseApplyFtrlV2" if "l2_shrinkage" in inputs else "SparseApplyFtrl"
        return _sparse(op_type, grad, **inputs)


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

    @_handles_duplicates
    def _apply_sparse(self, grad, var):
        c = lambda t: self._cast(t, var)  # noqa: E731
        return _sparse("SparseApplyProximalGradientDescent", grad, var=var._ref(),
                       alpha=c(self._lr_t), l1=c(self._l1_t), l2=c(self._l2_t),
                       use_locking=self._use_locking)


class AdagradDAOptimizer(Optimizer):
    """Adagrad dual averaging (TF1's): the variable is a closed form of the accumulated
    gradient and squared gradient at the current global step, so rows a batch does not
    touch are regularized as if they had been updated every step."""

    def __init__(self, learning_rate, global_step,
                 initial_gradient_squared_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="AdagradDA"):
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError(f"initial_gradient_squared_accumulator_value must be positive: "
                             f"{initial_gradient_squared_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial = initial_gradient_squared_accumulator_value
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength
        self._global_step = global_step

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "gradient_accumulator", self._name)
            self._slot_variable(v, init_ops.constant_initializer(self._initial),
                                "gradient_squared_accumulator", self._name + "_1")

    def _prepare(self):
        self._lr_t = convert_to_tensor(self._learning_rate, name="learning_rate")
        # TF1: the step the update is for (global_step + 1), read once per step.
        self._global_step_on_worker = array_ops.identity(self._global_step) + 1

    def _inputs(self, var):
        with _graph.device(var.device):
            global_step = array_ops.identity(self._global_step_on_worker)
        c = lambda t: self._cast(t, var)  # noqa: E731
        return dict(var=var._ref(),
                    gradient_accumulator=self.get_slot(var, "gradient_accumulator")._ref(),
                    gradient_squared_accumulator=self.get_slot(
                        var, "gradient_squared_accumulator")._ref(),
                    lr=c(self._lr_t), l1=c(self._l1), l2=c(self._l2),
                    global_step=global_step,
                    use_locking=self._use_locking)

    def _apply_dense(self, grad, var):
        return apply_op("ApplyAdagradDA", grad=grad, **self._inputs(var)).op

    @_handles_duplicates
    def _apply_sparse(self, grad, var):
        return _sparse("SparseApplyAdagradDA", grad, **self._inputs(var))


class ProximalAdagradOptimizer(Optimizer):
    """Adagrad's per-coordinate learning rate with TF1's proximal (Fobos) step for L1 and
    L2 regularization."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalAdagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: "
                             f"{initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate, self._initial = learning_rate, initial_accumulator_value
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot_variable(v, init_ops.constant_initializer(self._initial),
                                "accumulator", self._name)

    def _prepare(self):
        # As TF1, not cast to the variable's dtype: a float64 variable needs float64
        # hyperparameters (tensors), as TF's type check says.
        self._lr_t = convert_to_tensor(self._learning_rate, name="learning_rate")
        self._l1_t = convert_to_tensor(self._l1, name="l1_regularization_strength")
        self._l2_t = convert_to_tensor(self._l2, name="l2_regularization_strength")

    def _inputs(self, var):
        return dict(var=var._ref(), accum=self.get_slot(var, "accumulator")._ref(),
                    lr=self._lr_t, l1=self._l1_t, l2=self._l2_t,
                    use_locking=self._use_locking)

    def _apply_dense(self, grad, var):
        return apply_op("ApplyProximalAdagrad", grad=grad, **self._inputs(var)).op

    @_handles_duplicates
    def _apply_sparse(self, grad, var):
        return _sparse("SparseApplyProximalAdagrad", grad, **self._inputs(var))
