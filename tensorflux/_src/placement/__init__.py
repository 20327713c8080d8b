"""Learned device placement: the op graph with per-op costs (op_graph, op_costs), the
step-time simulator (cost_model), the baseline placers (baselines) and the policy's op
features (features). The policy itself, written in tensorflux graph ops, and the public
API live in tensorflux/placement/."""
