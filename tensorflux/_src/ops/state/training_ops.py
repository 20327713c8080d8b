"""Fused optimizer updates (ApplyGradientDescent, ApplyAdam, ...) with TF1's formulas.

Each op reads and writes a variable and its slots in one step, so XLA fuses the whole
update and, with donation, performs it in place. Formulas are TF1's documented update
rules; scalars (learning rate, betas, ...) are tensors of the variable's dtype. A slot
the variable's step is computed from is `settle`d first (compiler/effects.py): guarded
by the run's checks there rather than only at the end, which made XLA copy it.
"""

from __future__ import annotations

import jax.numpy as jnp

from tensorflux._src.compiler.effects import settle
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.ops.registry import OpDef, register

_T = {"T": _dtypes.FLOAT_COMPLEX, "use_locking": False}


def _var_shape(op):
    return op.inputs[0].shape


def _apply(op_type, inputs, writes, update, **attrs):
    register(OpDef(op_type, inputs=inputs, outputs=("out: Ref(T)",), attrs={**_T, **attrs},
                   shape=_var_shape, lower=update, writes=writes))


_apply("ApplyGradientDescent", ("var: Ref(T)", "alpha: T", "delta: T"), ("var",),
       lambda var, alpha, delta: var - alpha * delta)


def _momentum(var, accum, lr, grad, momentum, use_nesterov):
    accum = settle(accum * momentum + grad, accum)
    step = grad * lr + accum * momentum * lr if use_nesterov else accum * lr
    return var - step, accum


_apply("ApplyMomentum", ("var: Ref(T)", "accum: Ref(T)", "lr: T", "grad: T", "momentum: T"),
       ("var", "accum"), _momentum, use_nesterov=False)


def _adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad,
          use_nesterov):
    lr_t = lr * jnp.sqrt(1 - beta2_power) / (1 - beta1_power)
    m = settle(m + (grad - m) * (1 - beta1), m)
    v = settle(v + (grad * grad - v) * (1 - beta2), v)
    direction = (m * beta1 + grad * (1 - beta1)) if use_nesterov else m
    return var - lr_t * direction / (jnp.sqrt(v) + epsilon), m, v


_apply("ApplyAdam", ("var: Ref(T)", "m: Ref(T)", "v: Ref(T)", "beta1_power: T",
                     "beta2_power: T", "lr: T", "beta1: T", "beta2: T", "epsilon: T",
                     "grad: T"), ("var", "m", "v"), _adam, use_nesterov=False)


def _adagrad(var, accum, lr, grad, update_slots):
    if update_slots:
        accum = settle(accum + grad * grad, accum)
    return var - lr * grad / jnp.sqrt(accum), accum


_apply("ApplyAdagrad", ("var: Ref(T)", "accum: Ref(T)", "lr: T", "grad: T"),
       ("var", "accum"), _adagrad, update_slots=True)


def _adadelta(var, accum, accum_update, lr, rho, epsilon, grad):
    accum = settle(accum * rho + grad * grad * (1 - rho), accum)
    update = jnp.sqrt(accum_update + epsilon) / jnp.sqrt(accum + epsilon) * grad
    accum_update = accum_update * rho + update * update * (1 - rho)
    return var - update * lr, accum, accum_update


_apply("ApplyAdadelta", ("var: Ref(T)", "accum: Ref(T)", "accum_update: Ref(T)", "lr: T",
                         "rho: T", "epsilon: T", "grad: T"),
       ("var", "accum", "accum_update"), _adadelta)


def _rmsprop(var, ms, mom, lr, rho, momentum, epsilon, grad):
    ms = settle(ms + (grad * grad - ms) * (1 - rho), ms)
    mom = settle(mom * momentum + lr * grad / jnp.sqrt(ms + epsilon), mom)
    return var - mom, ms, mom


_apply("ApplyRMSProp", ("var: Ref(T)", "ms: Ref(T)", "mom: Ref(T)", "lr: T", "rho: T",
                        "momentum: T", "epsilon: T", "grad: T"),
       ("var", "ms", "mom"), _rmsprop)


def _centered_rmsprop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad):
    ms = settle(ms + (grad * grad - ms) * (1 - rho), ms)
    mg = settle(mg + (grad - mg) * (1 - rho), mg)
    mom = settle(mom * momentum + lr * grad / jnp.sqrt(ms - mg * mg + epsilon), mom)
    return var - mom, mg, ms, mom


_apply("ApplyCenteredRMSProp", ("var: Ref(T)", "mg: Ref(T)", "ms: Ref(T)", "mom: Ref(T)",
                                "lr: T", "rho: T", "momentum: T", "epsilon: T", "grad: T"),
       ("var", "mg", "ms", "mom"), _centered_rmsprop)


def _ftrl(var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power):
    shrunk = grad + 2 * l2_shrinkage * var
    accum_new = accum + grad * grad
    sigma = (accum_new ** -lr_power - accum ** -lr_power) / lr
    linear = linear + shrunk - sigma * var
    quadratic = 1 / (accum_new ** lr_power * lr) + 2 * l2
    var = jnp.where(jnp.abs(linear) > l1, (jnp.sign(linear) * l1 - linear) / quadratic, 0)
    return var.astype(accum.dtype), accum_new, linear


_apply("ApplyFtrlV2", ("var: Ref(T)", "accum: Ref(T)", "linear: Ref(T)", "grad: T", "lr: T",
                       "l1: T", "l2: T", "l2_shrinkage: T", "lr_power: T"),
       ("var", "accum", "linear"), _ftrl)


def _proximal_gd(var, alpha, l1, l2, delta):
    prox = var - alpha * delta
    return jnp.sign(prox) / (1 + alpha * l2) * jnp.maximum(jnp.abs(prox) - alpha * l1, 0)


_apply("ApplyProximalGradientDescent", ("var: Ref(T)", "alpha: T", "l1: T", "l2: T",
                                        "delta: T"), ("var",), _proximal_gd)


def _proximal_adagrad(var, accum, lr, l1, l2, grad):
    accum = settle(accum + grad * grad, accum)
    step = lr / jnp.sqrt(accum)  # Adagrad's learning rate, then TF's Fobos step
    prox = var - grad * step
    return jnp.sign(prox) * jnp.maximum(jnp.abs(prox) - step * l1, 0) / (1 + l2 * step), accum


_apply("ApplyProximalAdagrad", ("var: Ref(T)", "accum: Ref(T)", "lr: T", "l1: T", "l2: T",
                                "grad: T"), ("var", "accum"), _proximal_adagrad)


def _adagrad_da(var, gradient_accumulator, gradient_squared_accumulator, grad, lr, l1, l2,
                global_step):
    g_acc = settle(gradient_accumulator + grad, gradient_accumulator)
    gg_acc = settle(gradient_squared_accumulator + grad * grad, gradient_squared_accumulator)
    step = jnp.asarray(global_step).astype(var.dtype)
    # w = -sign(g_acc) * lr * max(|g_acc| - l1 * T, 0) / (l2 * T * lr + sqrt(gg_acc))
    numerator = -jnp.sign(g_acc) * jnp.maximum(jnp.abs(g_acc) - l1 * step, 0) * lr
    return numerator / (l2 * step * lr + jnp.sqrt(gg_acc)), g_acc, gg_acc


_apply("ApplyAdagradDA", ("var: Ref(T)", "gradient_accumulator: Ref(T)",
                          "gradient_squared_accumulator: Ref(T)", "grad: T", "lr: T", "l1: T",
                          "l2: T", "global_step: int64"),
       ("var", "gradient_accumulator", "gradient_squared_accumulator"), _adagrad_da)

# TF1's FtrlOptimizer uses ApplyFtrl when there is no l2 shrinkage.
_apply("ApplyFtrl", ("var: Ref(T)", "accum: Ref(T)", "linear: Ref(T)", "grad: T", "lr: T",
                     "l1: T", "l2: T", "lr_power: T"), ("var", "accum", "linear"),
       lambda var, accum, linear, grad, lr, l1, l2, lr_power: _ftrl(
           var, accum, linear, grad, lr, l1, l2, 0.0, lr_power))
