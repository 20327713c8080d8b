"""`tf.contrib.layers.optimize_loss`: one call from a loss to a training op.

    train_op = optimize_loss(loss, global_step, learning_rate=0.1, optimizer="SGD",
                             clip_gradients=5.0)
    sess.run(train_op)   # one update; returns the loss (computed before the update)

Order of the gradient pipeline (as TF): compute -> add noise -> multiply -> clip (a float
clips by global norm) -> apply (incrementing `global_step`). A float `learning_rate`
becomes the non-trainable variable `OptimizeLoss/learning_rate`.
"""

from __future__ import annotations

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.indexed_slices import IndexedSlices
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import clip_ops, math_ops
from tensorflux._src.ops.state import init_ops
from tensorflux._src.ops.random import random_ops
from tensorflux._src.train import optimizers as _opt
from tensorflux._src.train import variable_scope as vs
from tensorflux._src.train.optimizer import Optimizer, get_global_step
from tensorflux._src.train.variables import Variable, trainable_variables

__all__ = ["optimize_loss", "OPTIMIZER_CLS_NAMES", "OPTIMIZER_SUMMARIES"]

OPTIMIZER_CLS_NAMES = {
    "Adagrad": _opt.AdagradOptimizer,
    "Adam": _opt.AdamOptimizer,
    "Ftrl": _opt.FtrlOptimizer,
    "Momentum": lambda learning_rate: _opt.MomentumOptimizer(learning_rate, momentum=0.9),
    "RMSProp": _opt.RMSPropOptimizer,
    "SGD": _opt.GradientDescentOptimizer,
}

OPTIMIZER_SUMMARIES = ["learning_rate", "loss", "gradients", "gradient_norm",
                       "global_gradient_norm"]


def _summary():
    from tensorflux._src.summary import summary_ops
    return summary_ops


def _with_dependencies(deps, tensor):
    with _graph.control_dependencies(list(deps)):
        return array_ops.identity(tensor)


def _make_optimizer(optimizer, lr, learning_rate):
    if isinstance(optimizer, str):
        if lr is None:
            raise ValueError(f"Learning rate is None, but should be specified if optimizer is "
                             f"string ({optimizer}).")
        if optimizer not in OPTIMIZER_CLS_NAMES:
            raise ValueError(f"Optimizer name should be one of "
                             f"[{', '.join(OPTIMIZER_CLS_NAMES)}], you provided {optimizer}.")
        return OPTIMIZER_CLS_NAMES[optimizer](learning_rate=lr)
    if isinstance(optimizer, type) and issubclass(optimizer, Optimizer):
        if lr is None:
            raise ValueError(f"Learning rate is None, but should be specified if optimizer is "
                             f"class ({optimizer}).")
        return optimizer(learning_rate=lr)
    if isinstance(optimizer, Optimizer):
        return optimizer
    if callable(optimizer):
        opt = optimizer(lr) if learning_rate is not None else optimizer()
        if not isinstance(opt, Optimizer):
            raise ValueError(f"Unrecognized optimizer: function should return subclass of "
                             f"Optimizer. Got {opt}.")
        return opt
    raise ValueError(f"Unrecognized optimizer: should be string, subclass of Optimizer, "
                     f"instance of subclass of Optimizer or function with one argument. "
                     f"Got {optimizer}.")


def _add_scaled_noise(grads_and_vars, scale):
    out = []
    for grad, var in grads_and_vars:
        if grad is not None:
            # A sparse gradient gets noise on every row: the sum is dense, as in TF1.
            shape = grad.dense_shape if isinstance(grad, IndexedSlices) else \
                array_ops.shape(grad)
            grad = grad + random_ops.random_normal(shape, dtype=grad.dtype) * scale
        out.append((grad, var))
    return out


def _multiply_gradients(grads_and_vars, multipliers):
    out = []
    for grad, var in grads_and_vars:
        key = var if var in multipliers else var.name if var.name in multipliers else None
        if grad is not None and key is not None:
            multiplier = math_ops.cast(convert_to_tensor(multipliers[key]), grad.dtype)
            if isinstance(grad, IndexedSlices):  # scale the values, keep it sparse
                grad = IndexedSlices(grad.values * multiplier, grad.indices, grad.dense_shape)
            else:
                grad = grad * multiplier
        out.append((grad, var))
    return out


def optimize_loss(loss, global_step, learning_rate, optimizer, gradient_noise_scale=None,
                  gradient_multipliers=None, clip_gradients=None, learning_rate_decay_fn=None,
                  update_ops=None, variables=None, name=None, summaries=None,
                  colocate_gradients_with_ops=False, increment_global_step=True):
    """Builds the training op for `loss` (see module doc); returns a tensor that runs one
    update and evaluates to the loss."""
    from tensorflux.contrib.framework import assert_global_step
    loss = convert_to_tensor(loss)
    if loss.shape.ndims not in (0, None):
        raise ValueError(f"Expected scalar shape for {loss.name}, saw shape: {loss.shape}.")
    if global_step is None:
        global_step = get_global_step()
    else:
        assert_global_step(global_step)
    summary = _summary()
    with vs.variable_scope(name, "OptimizeLoss", [loss, global_step]):
        if update_ops is None:
            update_ops = list(dict.fromkeys(_graph.get_collection(GraphKeys.UPDATE_OPS)))
        if update_ops:  # batch-norm statistics etc. update before the loss is used
            loss = _with_dependencies(update_ops, loss)

        lr = None
        if learning_rate is not None:
            if isinstance(learning_rate, (Tensor, Variable)) and learning_rate.shape.ndims == 0:
                lr = learning_rate
            elif isinstance(learning_rate, float):
                if learning_rate < 0.0:
                    raise ValueError(f"Invalid learning_rate {learning_rate}.")
                lr = vs.get_variable("learning_rate", [], trainable=False,
                                     initializer=init_ops.constant_initializer(learning_rate))
            else:
                raise ValueError(f"Learning rate should be 0d Tensor or float. Got "
                                 f"{learning_rate} of type {type(learning_rate)}")
        if summaries is None:
            summaries = ["loss", "learning_rate", "global_gradient_norm"]
        else:
            for summ in summaries:
                if summ not in OPTIMIZER_SUMMARIES:
                    raise ValueError(f"Summaries should be one of "
                                     f"[{', '.join(OPTIMIZER_SUMMARIES)}], you provided {summ}.")
        if learning_rate is not None and learning_rate_decay_fn is not None:
            if global_step is None:
                raise ValueError("global_step is required for learning_rate_decay_fn.")
            lr = learning_rate_decay_fn(lr, global_step)
            if "learning_rate" in summaries:
                summary.scalar("learning_rate", lr)

        opt = _make_optimizer(optimizer, lr, learning_rate)
        if variables is None:
            variables = trainable_variables()
        gradients = opt.compute_gradients(
            loss, variables, colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gradient_noise_scale is not None:
            gradients = _add_scaled_noise(gradients, gradient_noise_scale)
        if gradient_multipliers is not None:
            gradients = _multiply_gradients(gradients, gradient_multipliers)
            if not gradients:
                raise ValueError("Empty list of (gradient, var) pairs encountered. This is most "
                                 "likely to be caused by an improper value of "
                                 "gradient_multipliers.")
        present = [g for g, _ in gradients if g is not None]
        if present and ("global_gradient_norm" in summaries or "gradient_norm" in summaries):
            summary.scalar("global_norm/gradient_norm", clip_ops.global_norm(present))

        if isinstance(clip_gradients, float):
            grads, variables_ = zip(*gradients)
            clipped, _ = clip_ops.clip_by_global_norm(list(grads), clip_gradients)
            gradients = list(zip(clipped, variables_))
        elif callable(clip_gradients):
            gradients = clip_gradients(gradients)
        elif clip_gradients is not None:
            raise ValueError(f"Unknown type {type(clip_gradients)} for clip_gradients")

        if "loss" in summaries:
            summary.scalar("loss", loss)
        for grad, var in gradients:
            if grad is None:
                continue
            var_name = var.op.name.replace(":", "_")
            values = grad.values if isinstance(grad, IndexedSlices) else grad
            if "gradients" in summaries:
                summary.histogram(f"gradients/{var_name}", values)
            if "gradient_norm" in summaries:
                summary.scalar(f"gradient_norm/{var_name}", clip_ops.global_norm([values]))
        if clip_gradients is not None and ("global_gradient_norm" in summaries
                                           or "gradient_norm" in summaries):
            present = [g for g, _ in gradients if g is not None]
            if present:
                summary.scalar("global_norm/clipped_gradient_norm",
                               clip_ops.global_norm(present))

        grad_updates = opt.apply_gradients(
            gradients, global_step=global_step if increment_global_step else None,
            name="train")
        return _with_dependencies([grad_updates], loss)
