"""`tf.ConfigProto` / `tf.GPUOptions` / `tf.RunOptions`: session settings TF1 code passes.

These are plain records with TF's field names. Fields that only steer TF's own thread
pools are accepted and kept so programs run unchanged; tensorflux reads
`allow_soft_placement`, `log_device_placement` and `compiler_options` (XLA options for
every executable the session compiles).
"""

from __future__ import annotations


class _Record:
    _defaults: dict = {}

    def __init__(self, **kwargs):
        unknown = set(kwargs) - set(self._defaults)
        if unknown:
            raise ValueError(f"{type(self).__name__} has no field(s) {sorted(unknown)}; "
                             f"known fields: {sorted(self._defaults)}")
        for key, default in self._defaults.items():
            value = kwargs.get(key, default)
            setattr(self, key, value() if callable(value) and key not in kwargs else value)

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._defaults)
        return f"{type(self).__name__}({fields})"


class GPUOptions(_Record):
    _defaults = {"allow_growth": False, "per_process_gpu_memory_fraction": 0.0,
                 "visible_device_list": "", "force_gpu_compatible": False}


class OptimizerOptions(_Record):
    _defaults = {"do_common_subexpression_elimination": True, "do_constant_folding": True,
                 "opt_level": 0, "global_jit_level": 0}


class GraphOptions(_Record):
    _defaults = {"optimizer_options": OptimizerOptions, "enable_bfloat16_sendrecv": False,
                 "infer_shapes": False, "place_pruned_graph": False}


class ConfigProto(_Record):
    _defaults = {"device_count": dict, "intra_op_parallelism_threads": 0,
                 "inter_op_parallelism_threads": 0, "use_per_session_threads": False,
                 "allow_soft_placement": True, "log_device_placement": False,
                 "gpu_options": GPUOptions, "graph_options": GraphOptions,
                 "operation_timeout_in_ms": 0, "isolate_session_state": False,
                 "compiler_options": dict}


class RunOptions(_Record):
    NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE, FULL_TRACE = 0, 1, 2, 3
    _defaults = {"trace_level": 0, "timeout_in_ms": 0, "output_partition_graphs": False,
                 "report_tensor_allocations_upon_oom": False}


class NodeExecStats(_Record):
    _defaults = {"node_name": "", "timeline_label": "", "all_start_micros": 0,
                 "all_end_rel_micros": 0}


class DeviceStepStats(_Record):
    """One step of the run plan and the ops it ran; `kind` (not in TF's proto) is
    "xla:cluster_<n>" for a compiled cluster or "host" for a host op."""
    _defaults = {"device": "", "kind": "", "node_stats": list}


class StepStats(_Record):
    _defaults = {"dev_stats": list}


class RunMetadata(_Record):
    """Filled by `Session.run(..., run_metadata=md)`: `step_stats.dev_stats` has one entry
    per step of the run plan, in order, and `run_plan` says the same as text lines."""
    _defaults = {"step_stats": StepStats, "cost_graph": None, "partition_graphs": list,
                 "run_plan": list}


# Process-wide settings made through tf.config (soft placement, thread counts, JIT):
# ConfigProto fields for Sessions created without a config, as TF1's Session took its
# default config from the context tf.config writes to. "global_jit_level" goes to
# graph_options.optimizer_options.
session_defaults = {}


def default_config():
    """The ConfigProto of a Session created with config=None."""
    fields = {k: v for k, v in session_defaults.items() if k in ConfigProto._defaults}
    config = ConfigProto(**fields)
    if "global_jit_level" in session_defaults:
        config.graph_options.optimizer_options.global_jit_level = \
            session_defaults["global_jit_level"]
    return config
