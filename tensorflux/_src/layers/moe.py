"""The sparsely-gated mixture-of-experts layer (Shazeer et al. 2017, "Outrageously Large
Neural Networks"), a tensorflux extension (TF 1.15 has no MoE; tensor2tensor had one).

    outputs, aux_loss = mixture_of_experts(x, num_experts=8, hidden_units=256, k=2,
                                           capacity_factor=1.25, training=is_training)

Each token (a row of `x` over its last axis, all leading axes flattened) is routed to
`k` of `num_experts` feed-forward experts by noisy top-k gating, and the output is the
gate-weighted sum of those experts' outputs. The formulas are tensor2tensor's
`expert_utils.py` (noisy_top_k_gating, cv_squared, _prob_in_top_k, _gates_to_load):

    clean  = x W_gate                                   (tokens, E)
    stddev = (softplus(x W_noise) + noise_epsilon) * training
    noisy  = clean + N(0, 1) * stddev
    gates  = softmax over the k largest noisy logits, 0 elsewhere (each row sums to 1)
    importance = sum of gates over tokens               (E,)
    load = sum over tokens of P(expert in the top k | a fresh draw of its own noise)
         = Phi((clean - threshold) / stddev), threshold = the (k+1)-th largest noisy logit
           if the expert is in the top k, else the k-th      (k < E and noisy gating)
         = number of tokens with gate > 0                     (otherwise; not smooth)
    aux_loss = loss_coef * (cv_squared(importance) + cv_squared(load))
    cv_squared(v) = variance(v) / (mean(v)^2 + 1e-10), both with 1e-10 added to the count

Dispatch is dense, as in GShard/Mesh-TensorFlow (einsums over one-hot dispatch tensors, so
XLA sees static shapes and no data-dependent gather): tokens are split into groups of
`group_size` (default: one group of all tokens) and each expert takes at most
`capacity = ceil(capacity_factor * k * group_size / E)` tokens per group. Assignments
claim places in priority order, every token's first choice (in token order) before any
second choice; an assignment past capacity is dropped: that expert contributes nothing to
that token and the remaining gates are not renormalized (Mesh-TensorFlow's rule), so a
token with every choice dropped outputs 0 (around a residual connection it passes
through unchanged). `capacity_factor=None` means no token is ever dropped
(capacity = group size). The auxiliary losses count every routed assignment, dropped or
not, as tensor2tensor's do.

Expert parallelism (`expert_parallel=True`, the default): under a distribution strategy
(`tf.distribute.MirroredStrategy`), the groups are laid out split over the devices like
the batch and the experts split along the expert axis (ops/array/sharding.py), so XLA
sends tokens to their experts' devices and back with all-to-alls and each device runs
only its experts. On one device the constraints are the identity.
"""

from __future__ import annotations

import collections
import math

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.layers.base import Layer
from tensorflux._src.ops.array import array_ops, gather_ops, sort_ops
from tensorflux._src.ops.array.sharding import sharding_constraint
from tensorflux._src.ops.linalg import linalg_ops
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.nn import nn_ops
from tensorflux._src.ops.random import random_ops
from tensorflux._src.ops.state import init_ops

__all__ = [
    "Gating",
    "MixtureOfExperts",
    "cv_squared",
    "expert_capacity",
    "gates_to_load",
    "mixture_of_experts",
    "noisy_top_k_gating",
    "prob_in_top_k",
]

_F32 = _dtypes.float32


def cv_squared(x):
    """The squared coefficient of variation of the entries of `x`: variance / mean^2
    (tensor2tensor's epsilons: 1e-10 added to the count and to mean^2, so an empty or
    all-zero `x` gives 0 rather than NaN)."""
    with _graph.name_scope(None, "cv_squared", [x]):
        x = convert_to_tensor(x, name="x")
        epsilon = 1e-10
        count = math_ops.cast(array_ops.size(x), x.dtype) + epsilon
        mean = reduce_ops.reduce_sum(x) / count
        variance = reduce_ops.reduce_sum(math_ops.squared_difference(x, mean)) / count
        return variance / (math_ops.square(mean) + epsilon)


def gates_to_load(gates):
    """The true load of each expert: how many rows of `gates` (tokens, E) give it a
    nonzero gate. A count, so it has no gradient."""
    return reduce_ops.reduce_sum(math_ops.cast(math_ops.greater(gates, 0.0), gates.dtype), 0)


def _normal_cdf(x, stddev):
    # Phi(x / stddev); the 1e-20 keeps stddev = 0 (no noise at inference) a step function.
    return 0.5 * (1.0 + math_ops.erf(x / (math.sqrt(2) * stddev + 1e-20)))


def prob_in_top_k(clean_values, noisy_values, noise_stddev, noisy_top_values, k):
    """(tokens, E): the probability that each expert is in its token's top k when only its
    own noise is drawn again (the others' noisy logits fixed), a smooth stand-in for the
    0/1 "is in the top k" whose sum over tokens is the load.

    `noisy_top_values` (tokens, m >= k + 1) are the m largest noisy logits, descending.
    An expert in the top k stays in if its new logit beats the (k+1)-th largest; one
    outside gets in if it beats the k-th largest.
    """
    threshold_if_in = noisy_top_values[:, k:k + 1]        # (tokens, 1): (k+1)-th largest
    threshold_if_out = noisy_top_values[:, k - 1:k]       # (tokens, 1): k-th largest
    is_in = math_ops.greater(noisy_values, threshold_if_in)
    prob_if_in = _normal_cdf(clean_values - threshold_if_in, noise_stddev)
    prob_if_out = _normal_cdf(clean_values - threshold_if_out, noise_stddev)
    return gather_ops.where(is_in, prob_if_in, prob_if_out)


Gating = collections.namedtuple("Gating", [
    "gates",           # (tokens, E): softmax of the k largest noisy logits, 0 elsewhere
    "load",            # (E,): smooth load (prob_in_top_k summed) or the true count
    "top_k_indices",   # (tokens, k) int32: the chosen experts, by descending logit
    "top_k_gates",     # (tokens, k): their gates
    "clean_logits",    # (tokens, E)
    "noise",           # (tokens, E): the standard normal draw, or None without noise
    "noise_stddev",    # (tokens, E), or None without noise
])


def noisy_top_k_gating(x, w_gate, w_noise, k, training=True, noise_epsilon=1e-2,
                       seed=None, noise=None):
    """Noisy top-k gating of tokens `x` (tokens, d) over E = w_gate.shape[1] experts.

    `w_noise` None turns the noise off (plain top-k gating). `training` (a Python bool or
    a bool tensor) scales the noise, as tensor2tensor does: at inference the logits are
    the clean ones and the smooth load becomes the hard count. `noise` (tokens, E)
    replaces the standard normal draw (a fixed draw makes the gating a deterministic
    function, e.g. for gradient checks).
    """
    num_experts = w_gate.shape[1].value
    if not 1 <= k <= num_experts:
        raise ValueError(f"k must be between 1 and the number of experts ({num_experts}). "
                         f"Received: k={k}")
    with _graph.name_scope(None, "noisy_top_k_gating", [x, w_gate, w_noise]):
        clean = linalg_ops.matmul(x, w_gate)
        stddev = None
        logits = clean
        if w_noise is None:
            noise = None
        else:
            on = math_ops.cast(convert_to_tensor(training, _dtypes.bool), clean.dtype)
            stddev = (nn_ops.softplus(linalg_ops.matmul(x, w_noise)) + noise_epsilon) * on
            if noise is None:
                noise = random_ops.random_normal(array_ops.shape(clean), dtype=clean.dtype,
                                                 seed=seed)
            logits = clean + noise * stddev
        # k + 1 values: the (k+1)-th is the threshold prob_in_top_k needs.
        top_values, top_indices = sort_ops.top_k(logits, min(k + 1, num_experts))
        top_k_gates = nn_ops.softmax(top_values[:, :k])
        top_k_indices = top_indices[:, :k]
        # (tokens, k, E) one-hots weighted by their gates, summed over the k choices.
        gates = reduce_ops.reduce_sum(
            gather_ops.one_hot(top_k_indices, num_experts, dtype=clean.dtype)
            * array_ops.expand_dims(top_k_gates, -1), 1)
        if w_noise is not None and k < num_experts:
            load = reduce_ops.reduce_sum(
                prob_in_top_k(clean, logits, stddev, top_values, k), 0)
        else:
            load = gates_to_load(gates)
        return Gating(gates, load, top_k_indices, top_k_gates, clean, noise, stddev)


def expert_capacity(group_size, num_experts, k, capacity_factor):
    """Places per expert per group: ceil(capacity_factor * k * group_size / E), at most
    the group size; the group size itself when capacity_factor is None. An int when
    `group_size` is, else a scalar int32 tensor (computed from the runtime shape, which
    XLA knows when it compiles)."""
    if capacity_factor is None:
        return group_size
    if isinstance(group_size, int):
        return max(1, min(group_size, math.ceil(capacity_factor * k * group_size
                                                / num_experts)))
    size = math_ops.cast(group_size, _dtypes.float64)
    capacity = math_ops.cast(math_ops.ceil(size * (capacity_factor * k / num_experts)),
                             _dtypes.int32)
    return math_ops.minimum(math_ops.maximum(capacity, 1), group_size)


def _dispatch_and_combine(top_k_indices, top_k_gates, num_experts, capacity):
    """(dispatch, combine), each (groups, group_size, E, capacity).

    dispatch[g, s, e, c] is 1 when token s of group g takes place c of expert e; combine
    holds its gate there. Choice j of every token is placed after all choices < j.
    """
    k = top_k_indices.shape[-1].value
    dtype = top_k_gates.dtype
    dispatch = combine = None
    taken = None                                          # (G, 1, E): places used so far
    for j in range(k):
        mask = gather_ops.one_hot(top_k_indices[:, :, j], num_experts, dtype=dtype)
        position = reduce_ops.cumsum(mask, axis=1, exclusive=True)        # (G, S, E)
        if taken is not None:
            position += taken
        taken = (reduce_ops.reduce_sum(mask, 1, keepdims=True)
                 + (taken if taken is not None else 0.0))
        # one_hot of a place >= capacity is all zeros: that assignment is dropped.
        places = gather_ops.one_hot(math_ops.cast(position, _dtypes.int32), capacity,
                                    dtype=dtype) * array_ops.expand_dims(mask, -1)
        gate = array_ops.expand_dims(array_ops.expand_dims(top_k_gates[:, :, j], -1), -1)
        dispatch = places if dispatch is None else dispatch + places
        combine = places * gate if combine is None else combine + places * gate
    return dispatch, combine


class MixtureOfExperts(Layer):
    """A mixture of `num_experts` two-layer feed-forward experts
    (activation(x W1 + b1) W2 + b2, `hidden_units` wide) with noisy top-k gating.

    Calling it returns the outputs (x's shape, last axis `output_units`, default x's);
    the auxiliary loss `loss_coef * (cv_squared(importance) + cv_squared(load))` goes to
    REGULARIZATION_LOSSES (as every tf.layers loss) and, with the gates, importance and
    load of the last call, is kept on the layer (`aux_loss`, `gating`, `importance`,
    `load`). Variables: `w_gate`, `w_noise` (E-wide, zero-initialized as in
    tensor2tensor, so routing starts from the noise alone), and the experts stacked on a
    leading expert axis: `expert_kernel_1` (E, d, h), `expert_bias_1` (E, h),
    `expert_kernel_2` (E, h, out), `expert_bias_2` (E, out).
    """

    def __init__(self, num_experts, hidden_units, k=2, output_units=None,
                 capacity_factor=None, group_size=None, loss_coef=1e-2, noisy_gating=True,
                 noise_epsilon=1e-2, activation=nn_ops.relu, seed=None,
                 expert_parallel=True, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        for arg, value in (("num_experts", num_experts), ("hidden_units", hidden_units),
                           ("k", k)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{arg} must be a positive integer. Received: "
                                 f"{arg}={value!r}")
        if k > num_experts:
            raise ValueError(f"k must be at most num_experts. Received: k={k}, "
                             f"num_experts={num_experts}")
        if capacity_factor is not None and not capacity_factor > 0:
            raise ValueError(f"capacity_factor must be positive or None. Received: "
                             f"capacity_factor={capacity_factor!r}")
        if group_size is not None and (not isinstance(group_size, int) or group_size < 1):
            raise ValueError(f"group_size must be a positive integer or None. Received: "
                             f"group_size={group_size!r}")
        self.num_experts, self.hidden_units, self.k = num_experts, hidden_units, k
        self.output_units = output_units
        self.capacity_factor, self.group_size = capacity_factor, group_size
        self.loss_coef, self.noisy_gating = loss_coef, noisy_gating
        self.noise_epsilon, self.activation, self.seed = noise_epsilon, activation, seed
        self.expert_parallel = expert_parallel

    def _layout(self, x, mesh_axes):
        """Under a distribution strategy, `x` split over the devices along the dims marked
        0 (see ops/array/sharding.py); the identity otherwise."""
        return sharding_constraint(x, mesh_axes) if self.expert_parallel else x

    def build(self, input_shape):
        input_shape = tensor_shape.as_shape(input_shape)
        depth = input_shape[-1].value
        if depth is None:
            raise ValueError("The last dimension of the inputs to `MixtureOfExperts` should "
                             "be defined. Found `None`.")
        dtype = self.dtype or _F32
        e, h = self.num_experts, self.hidden_units
        out = self.output_units or depth
        zeros = init_ops.zeros_initializer()
        self.w_gate = self.add_weight("w_gate", [depth, e], dtype, zeros)
        self.w_noise = (self.add_weight("w_noise", [depth, e], dtype, zeros)
                        if self.noisy_gating else None)

        def glorot(fan_in, fan_out):
            # Each expert's matrix on its own fans (a glorot initializer would count the
            # expert axis into the receptive field and shrink the weights by sqrt(E)).
            limit = math.sqrt(6.0 / (fan_in + fan_out))
            return init_ops.random_uniform_initializer(-limit, limit, seed=self.seed)

        self.expert_kernel_1 = self.add_weight("expert_kernel_1", [e, depth, h], dtype,
                                               glorot(depth, h))
        self.expert_bias_1 = self.add_weight("expert_bias_1", [e, h], dtype, zeros)
        self.expert_kernel_2 = self.add_weight("expert_kernel_2", [e, h, out], dtype,
                                               glorot(h, out))
        self.expert_bias_2 = self.add_weight("expert_bias_2", [e, out], dtype, zeros)
        self.built = True

    def call(self, inputs, training=False):
        depth = inputs.shape[-1].value
        out_units = self.output_units or depth
        e = self.num_experts
        tokens = array_ops.reshape(inputs, [-1, depth])                   # (N, d)
        self.gating = noisy_top_k_gating(tokens, self.w_gate, self.w_noise, self.k,
                                         training, self.noise_epsilon, self.seed)
        self.importance = reduce_ops.reduce_sum(self.gating.gates, 0)
        self.load = self.gating.load
        self.aux_loss = self.loss_coef * (cv_squared(self.importance)
                                          + cv_squared(self.load))
        self.add_loss(self.aux_loss)

        # Groups: (G, S, d) with S = group_size, or one group of every token.
        static_tokens = tokens.shape[0].value
        size = self.group_size or static_tokens or array_ops.shape(tokens)[0]
        if isinstance(size, int) and static_tokens is not None and static_tokens % size:
            raise ValueError(f"The number of tokens ({static_tokens}) must be a multiple of "
                             f"group_size. Received: group_size={self.group_size}")
        grouped = self._layout(array_ops.reshape(tokens, [-1, size, depth]), [0, -1, -1])
        indices = array_ops.reshape(self.gating.top_k_indices, [-1, size, self.k])
        top_gates = array_ops.reshape(self.gating.top_k_gates, [-1, size, self.k])
        capacity = expert_capacity(size, e, self.k, self.capacity_factor)
        self.capacity = capacity
        dispatch, combine = _dispatch_and_combine(indices, top_gates, e, capacity)
        dispatch = self._layout(dispatch, [0, -1, -1, -1])   # groups split like the batch
        combine = self._layout(combine, [0, -1, -1, -1])

        # Expert parallelism: under a strategy, the groups (hence the tokens) are split
        # over the devices, the experts too (their weights and their inputs along the
        # expert axis), so moving tokens to their experts' devices and back are the two
        # all-to-alls XLA inserts between the layouts below.
        # (E, G, C, d): each expert's places in each group, then every expert at once on
        # its own weights (a batched matmul over the expert axis).
        expert_in = self._layout(linalg_ops.einsum("gsec,gsd->egcd", dispatch, grouped),
                                 [0, -1, -1, -1])
        flat_in = array_ops.reshape(expert_in, [e, -1, depth])                # (E, G*C, d)
        w1 = self._layout(self.expert_kernel_1, [0, -1, -1])
        w2 = self._layout(self.expert_kernel_2, [0, -1, -1])
        hidden = linalg_ops.einsum("end,edh->enh", flat_in, w1)
        hidden = hidden + array_ops.expand_dims(self.expert_bias_1, 1)
        if self.activation is not None:
            hidden = self.activation(hidden)
        expert_out = linalg_ops.einsum("enh,eho->eno", hidden, w2)
        expert_out = expert_out + array_ops.expand_dims(self.expert_bias_2, 1)
        expert_out = array_ops.reshape(expert_out, array_ops.stack(
            [e, array_ops.shape(grouped)[0], capacity, out_units]))          # (E, G, C, o)
        expert_out = self._layout(expert_out, [0, -1, -1, -1])
        outputs = self._layout(linalg_ops.einsum("gsec,egco->gso", combine, expert_out),
                               [0, -1, -1])
        out_shape = array_ops.concat([array_ops.shape(inputs)[:-1], [out_units]], 0)
        outputs = array_ops.reshape(outputs, out_shape)
        outputs.set_shape(inputs.shape[:-1].concatenate([out_units]))
        return outputs

    def compute_output_shape(self, input_shape):
        input_shape = tensor_shape.as_shape(input_shape)
        return input_shape[:-1].concatenate([self.output_units or input_shape[-1].value])


def mixture_of_experts(inputs, num_experts, hidden_units, k=2, output_units=None,
                       capacity_factor=None, group_size=None, loss_coef=1e-2,
                       noisy_gating=True, noise_epsilon=1e-2, activation=nn_ops.relu,
                       training=False, seed=None, expert_parallel=True, name=None,
                       reuse=None):
    """Functional MixtureOfExperts: returns (outputs, aux_loss), as tensor2tensor's
    `local_moe`. `name` is the variable scope (reuse it with reuse=True). The aux loss is
    also in REGULARIZATION_LOSSES; add the returned one to your loss *or* use
    `tf.losses.get_total_loss()`, not both."""
    layer = MixtureOfExperts(num_experts, hidden_units, k=k, output_units=output_units,
                             capacity_factor=capacity_factor, group_size=group_size,
                             loss_coef=loss_coef, noisy_gating=noisy_gating,
                             noise_epsilon=noise_epsilon, activation=activation, seed=seed,
                             expert_parallel=expert_parallel, name=name, _scope=name,
                             _reuse=reuse)
    outputs = layer.apply(inputs, training=training)
    return outputs, layer.aux_loss
