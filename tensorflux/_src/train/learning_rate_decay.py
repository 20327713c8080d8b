"""Learning-rate schedules of `tf.train` (TF1 formulas), plus a linear warmup.

Each returns a scalar tensor of the global step, so it is recomputed every run.
"""

from __future__ import annotations

import math

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.random import random_ops
from tensorflux._src.ops.array.gather_ops import where

__all__ = ["exponential_decay", "piecewise_constant", "piecewise_constant_decay",
           "polynomial_decay", "natural_exp_decay", "inverse_time_decay", "cosine_decay",
           "cosine_decay_restarts", "linear_cosine_decay", "noisy_linear_cosine_decay",
           "linear_warmup"]


def _float_step(learning_rate, global_step):
    if global_step is None:
        raise ValueError("global_step is required for this learning-rate schedule.")
    lr = convert_to_tensor(learning_rate, name="learning_rate")
    if not lr.dtype.is_floating:
        lr = math_ops.cast(lr, _dtypes.float32)
    return lr, math_ops.cast(global_step, lr.dtype)


def _exponent(lr, step, decay_steps, staircase):
    p = step / math_ops.cast(decay_steps, lr.dtype)
    return math_ops.floor(p) if staircase else p


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """lr * decay_rate ^ (step / decay_steps); the exponent is floored when staircase."""
    with _graph.name_scope(name, "ExponentialDecay",
                           [learning_rate, global_step, decay_steps, decay_rate]) as scope:
        lr, step = _float_step(learning_rate, global_step)
        p = _exponent(lr, step, decay_steps, staircase)
        return math_ops.multiply(lr, math_ops.pow(math_ops.cast(decay_rate, lr.dtype), p),
                                 name=scope)


def piecewise_constant(x, boundaries, values, name=None):
    """values[0] while x <= boundaries[0], values[1] while x <= boundaries[1], ..."""
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    with _graph.name_scope(name, "PiecewiseConstant", [x]) as scope:
        x = convert_to_tensor(x)
        values = [convert_to_tensor(v) for v in values]
        if any(v.dtype.base_dtype != values[0].dtype.base_dtype for v in values):
            raise ValueError(f"Values must have elements all with the same dtype "
                             f"({[v.dtype.name for v in values]}).")
        result = values[-1]
        for b, v in reversed(list(zip(boundaries, values[:-1]))):
            result = where(x <= math_ops.cast(b, x.dtype), v, result)
        from tensorflux._src.ops.array.array_ops import identity
        return identity(result, name=scope)


# TF1 exports the same function under both names.
piecewise_constant_decay = piecewise_constant


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle=False, name=None):
    """(lr - end) * (1 - step / decay_steps) ^ power + end, step capped (or cycled)."""
    with _graph.name_scope(name, "PolynomialDecay",
                           [learning_rate, global_step, decay_steps, end_learning_rate,
                            power]) as scope:
        lr, step = _float_step(learning_rate, global_step)
        end = math_ops.cast(end_learning_rate, lr.dtype)
        decay = math_ops.cast(decay_steps, lr.dtype)
        if cycle:
            multiplier = math_ops.ceil(step / decay)
            multiplier = where(step <= 0.0, math_ops.cast(1.0, lr.dtype), multiplier)
            decay = decay * multiplier
        else:
            step = math_ops.minimum(step, decay)
        fraction = math_ops.pow(1.0 - step / decay, math_ops.cast(power, lr.dtype))
        return math_ops.add((lr - end) * fraction, end, name=scope)


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """lr * exp(-decay_rate * step / decay_steps)."""
    with _graph.name_scope(name, "NaturalExpDecay",
                           [learning_rate, global_step, decay_rate]) as scope:
        lr, step = _float_step(learning_rate, global_step)
        p = _exponent(lr, step, decay_steps, staircase)
        return math_ops.multiply(lr, math_ops.exp(-math_ops.cast(decay_rate, lr.dtype) * p),
                                 name=scope)


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                       name=None):
    """lr / (1 + decay_rate * step / decay_steps)."""
    with _graph.name_scope(name, "InverseTimeDecay",
                           [learning_rate, global_step, decay_rate]) as scope:
        lr, step = _float_step(learning_rate, global_step)
        p = _exponent(lr, step, decay_steps, staircase)
        return math_ops.truediv(lr, 1.0 + math_ops.cast(decay_rate, lr.dtype) * p, name=scope)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)."""
    with _graph.name_scope(name, "CosineDecay", [learning_rate, global_step]) as scope:
        lr, step = _float_step(learning_rate, global_step)
        decay = math_ops.cast(decay_steps, lr.dtype)
        fraction = math_ops.minimum(step, decay) / decay
        cosine = 0.5 * (1.0 + math_ops.cos(math.pi * fraction))
        alpha = math_ops.cast(alpha, lr.dtype)
        return math_ops.multiply(lr, (1.0 - alpha) * cosine + alpha, name=scope)


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0,
                          alpha=0.0, name=None):
    """SGDR: cosine decay that restarts, each period t_mul times longer, m_mul times lower."""
    with _graph.name_scope(name, "SGDRDecay", [learning_rate, global_step]) as scope:
        lr, step = _float_step(learning_rate, global_step)
        fraction = step / math_ops.cast(first_decay_steps, lr.dtype)
        t_mul_t = math_ops.cast(t_mul, lr.dtype)
        if t_mul == 1.0:
            restart = math_ops.floor(fraction)
            fraction = fraction - restart
        else:
            restart = math_ops.floor(math_ops.log(1.0 - fraction * (1.0 - t_mul_t))
                                     / math_ops.log(t_mul_t))
            done = (1.0 - math_ops.pow(t_mul_t, restart)) / (1.0 - t_mul_t)
            fraction = (fraction - done) / math_ops.pow(t_mul_t, restart)
        m_fac = math_ops.pow(math_ops.cast(m_mul, lr.dtype), restart)
        cosine = 0.5 * m_fac * (1.0 + math_ops.cos(math.pi * fraction))
        alpha = math_ops.cast(alpha, lr.dtype)
        return math_ops.multiply(lr, (1.0 - alpha) * cosine + alpha, name=scope)


def _linear_cosine(lr, step, decay_steps, num_periods, alpha, beta, noise=None):
    """(alpha + linear + noise) * cosine + beta, with step capped at decay_steps (TF1)."""
    decay = math_ops.cast(decay_steps, lr.dtype)
    step = math_ops.minimum(step, decay)
    linear = (decay - step) / decay
    if noise is not None:
        linear = linear + noise(step)
    fraction = 2.0 * math_ops.cast(num_periods, lr.dtype) * (step / decay)
    cosine = 0.5 * (1.0 + math_ops.cos(math.pi * fraction))
    return (math_ops.cast(alpha, lr.dtype) + linear) * cosine + math_ops.cast(beta, lr.dtype)


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0,
                        beta=0.001, name=None):
    """lr * ((alpha + linear) * cosine + beta): linear = (decay_steps - step) / decay_steps,
    cosine = 0.5 * (1 + cos(2 pi num_periods step / decay_steps)), step <= decay_steps."""
    if global_step is None:
        raise ValueError("linear cosine decay requires global_step")
    with _graph.name_scope(name, "LinearCosineDecay", [learning_rate, global_step]) as scope:
        lr, step = _float_step(learning_rate, global_step)
        decayed = _linear_cosine(lr, step, decay_steps, num_periods, alpha, beta)
        return math_ops.multiply(lr, decayed, name=scope)


def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps, initial_variance=1.0,
                              variance_decay=0.55, num_periods=0.5, alpha=0.0, beta=0.001,
                              name=None):
    """linear_cosine_decay with N(0, initial_variance / (1 + step) ** variance_decay) noise
    added to the linear part (a fresh draw every run)."""
    if global_step is None:
        raise ValueError("noisy linear cosine decay requires global_step")
    with _graph.name_scope(name, "NoisyLinearCosineDecay",
                           [learning_rate, global_step]) as scope:
        lr, step = _float_step(learning_rate, global_step)

        def noise(capped_step):
            variance = math_ops.cast(initial_variance, lr.dtype) / math_ops.pow(
                1.0 + capped_step, math_ops.cast(variance_decay, lr.dtype))
            return random_ops.random_normal([], stddev=math_ops.sqrt(variance),
                                            dtype=lr.dtype)

        decayed = _linear_cosine(lr, step, decay_steps, num_periods, alpha, beta, noise)
        return math_ops.multiply(lr, decayed, name=scope)


def linear_warmup(learning_rate, global_step, warmup_steps, name=None):
    """Ramps any schedule up linearly: lr * step / warmup_steps for step < warmup_steps.

    `learning_rate` may itself be a schedule, e.g.
    `linear_warmup(cosine_decay(0.1, step, 1000), step, 100)`.
    """
    with _graph.name_scope(name, "LinearWarmup", [learning_rate, global_step]) as scope:
        lr, step = _float_step(learning_rate, global_step)
        warmup = math_ops.cast(warmup_steps, lr.dtype)
        from tensorflux._src.ops.array.array_ops import identity
        return identity(where(step < warmup, lr * step / warmup, lr), name=scope)
