"""`tensorflux.layers.moe`: the sparsely-gated mixture-of-experts layer (Shazeer et al.
2017), a tensorflux extension, not a TF 1.15 name (TF had no MoE layer; these follow
tensor2tensor's `expert_utils`). See `tensorflux/_src/layers/moe.py` for the formulas,
the capacity rule and what is dropped.

    from tensorflux.layers import moe
    outputs, aux_loss = moe.mixture_of_experts(x, num_experts=8, hidden_units=256, k=2,
                                               capacity_factor=1.25, training=True)
"""

from tensorflux._src.layers.moe import (  # noqa: F401
    Gating,
    MixtureOfExperts,
    cv_squared,
    expert_capacity,
    gates_to_load,
    mixture_of_experts,
    noisy_top_k_gating,
    prob_in_top_k,
)
