"""tf.linalg.experimental.conjugate_gradient: CG on a self-adjoint positive definite
LinearOperator, as one tf.while_loop (an XLA while loop)."""

from __future__ import annotations

import collections

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.array.array_ops import concat, expand_dims, shape, squeeze
from tensorflux._src.ops.array.generator_ops import zeros
from tensorflux._src.ops.control.control_flow_ops import while_loop
from tensorflux._src.ops.linalg.linalg_impl import matvec, norm
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.math.reduce_ops import reduce_any

__all__ = ["conjugate_gradient"]

CGState = collections.namedtuple("CGState", ["i", "x", "r", "p", "gamma"])


def conjugate_gradient(operator, rhs, preconditioner=None, x=None, tol=1e-5, max_iter=20,
                       name="conjugate_gradient"):
    """Solves operator @ x = rhs by (preconditioned) conjugate gradients; stops after
    `max_iter` steps or once every residual norm is below tol * ||rhs||. Returns the final
    CGState(i, x, r, p, gamma)."""
    if not (operator.is_self_adjoint and operator.is_positive_definite):
        raise ValueError("Expected a self-adjoint, positive definite operator.")

    def dot(a, b):
        return squeeze(matvec(expand_dims(a, -1), b, adjoint_a=True), axis=-1)

    with _graph.name_scope(name):
        rhs = convert_to_tensor(rhs, name="rhs")
        # Broadcast rhs against the operators' batch shapes (x, r and p all have it).
        batches = [operator] + ([preconditioner] if preconditioner is not None else [])
        r0 = rhs
        for op in batches:
            r0 = r0 + zeros(concat([op.batch_shape_tensor(), [1]], 0), dtype=rhs.dtype)
        tol = tol * norm(r0, axis=-1)
        if x is None:
            x = zeros(shape(r0), dtype=rhs.dtype)
        else:
            x = convert_to_tensor(x, name="x")
            r0 = rhs - operator.matvec(x)
        p0 = r0 if preconditioner is None else preconditioner.matvec(r0)
        gamma0 = dot(r0, p0)

        def stopping_criterion(i, state):
            return math_ops.logical_and(
                math_ops.less(i, max_iter),
                reduce_any(math_ops.greater(norm(state.r, axis=-1), tol)))

        def cg_step(i, state):
            z = operator.matvec(state.p)
            alpha = state.gamma / dot(state.p, z)
            x = state.x + expand_dims(alpha, -1) * state.p
            r = state.r - expand_dims(alpha, -1) * z
            q = r if preconditioner is None else preconditioner.matvec(r)
            gamma = dot(r, q)
            beta = gamma / state.gamma
            p = q + expand_dims(beta, -1) * state.p
            return i + 1, CGState(i + 1, x, r, p, gamma)

        state = CGState(i=0, x=x, r=r0, p=p0, gamma=gamma0)
        _, state = while_loop(stopping_criterion, cg_step, [0, state])
        return CGState(state.i, x=state.x, r=state.r, p=state.p, gamma=state.gamma)
