"""`tf.ConfigProto`, `tf.GPUOptions`, `tf.RunOptions`, `tf.RunMetadata`: TF's messages.

They are the protobuf classes of framework/proto/config.proto (TF's fields and numbers),
so a config or run metadata serializes, prints and compares as TF's, and unknown
keyword fields raise ValueError as in TF. Fields that only steer TF's own thread pools
are kept so programs run unchanged; the Session reads `allow_soft_placement` and
`log_device_placement`.

Two tensorflux additions live inside TF's messages, in fields TF defines for open-ended
data, so they survive CopyFrom, deepcopy and serialization:

- a session's XLA compiler options are a Grappler custom-optimizer entry named
  "xla_compiler_options" in `graph_options.rewrite_options` (see `compiler_options`,
  `compiler_options_config`);
- a traced run names the executor of each step ("cluster_0 on cpu: a, b" or
  "host: Where (Where)") as `thread_names[0]` of its DeviceStepStats (see `run_plan`,
  `step_kind`).
"""

from __future__ import annotations

from tensorflux._src.framework import protos

ConfigProto = protos.ConfigProto
GPUOptions = protos.GPUOptions
GraphOptions = protos.GraphOptions
OptimizerOptions = protos.OptimizerOptions
RunOptions = protos.RunOptions
RunMetadata = protos.RunMetadata
NodeExecStats = protos.NodeExecStats
DeviceStepStats = protos.DeviceStepStats
StepStats = protos.StepStats

# Unlike TF (whose proto default is False), a Session made without a config places an op
# whose device does not exist on one that does: tensorflux runs TF1 programs written for
# GPU machines on whatever JAX finds. An explicit ConfigProto() is TF's: strict.
SOFT_PLACEMENT_DEFAULT = True

# Process-wide settings made through tf.config (soft placement, thread counts, JIT):
# ConfigProto fields for Sessions created without a config, as TF1's Session took its
# default config from the context tf.config writes to. "global_jit_level" goes to
# graph_options.optimizer_options.
session_defaults = {}


def default_config():
    """The ConfigProto of a Session created with config=None."""
    config = ConfigProto(allow_soft_placement=SOFT_PLACEMENT_DEFAULT)
    for key, value in session_defaults.items():
        if key in ConfigProto.DESCRIPTOR.fields_by_name:
            setattr(config, key, value)
    if "global_jit_level" in session_defaults:
        config.graph_options.optimizer_options.global_jit_level = \
            session_defaults["global_jit_level"]
    return config


def check_config(config):
    """`config` as a Session takes it: None (the default config) or a ConfigProto."""
    if config is None:
        return default_config()
    if not isinstance(config, ConfigProto):
        raise TypeError(f"config must be a tf.ConfigProto, but got {type(config)}")
    return config


# -- XLA compiler options (a tensorflux extension) ------------------------------------
COMPILER_OPTIONS_NAME = "xla_compiler_options"


def _find_entry(config):
    for entry in config.graph_options.rewrite_options.custom_optimizers:
        if entry.name == COMPILER_OPTIONS_NAME:
            return entry
    return None


def compiler_options(config) -> dict:
    """The XLA compiler options `config` sets for every executable of its session:
    {option: value}, a value of None removing an option the runtime would choose."""
    entry = _find_entry(config) if config is not None else None
    if entry is None:
        return {}
    out = {}
    for key, attr in entry.parameter_map.items():
        kind = attr.WhichOneof("value")
        out[key] = (None if kind is None else attr.s.decode() if kind == "s"
                    else getattr(attr, kind))
    return out


def _attr(key, value):
    if value is None:
        return protos.AttrValue()  # no value: "remove this option"
    if isinstance(value, bool):
        return protos.AttrValue(b=value)
    if isinstance(value, int):
        return protos.AttrValue(i=value)
    if isinstance(value, float):
        return protos.AttrValue(f=value)
    if isinstance(value, str):
        return protos.AttrValue(s=value.encode())
    raise TypeError(f"compiler_options[{key!r}] must be a str, bool, int, float or None; "
                    f"got {type(value).__name__} {value!r}")


def compiler_options_config(options, config=None):
    """A copy of `config` whose session compiles with the XLA `options` ({option:
    value}; None removes an option) on top of what the runtime picks, e.g.
    {"xla_cpu_experimental_ynn_fusion_type": None} turns off autotuning. Replaces
    options set before. Without `config`, starts from the config a Session made with
    config=None uses (soft placement on, tf.config's settings)."""
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict of XLA option names to values; got "
                        f"{type(options).__name__}")
    result = ConfigProto()
    result.CopyFrom(check_config(config))
    entry = _find_entry(result)
    if entry is None:
        entry = result.graph_options.rewrite_options.custom_optimizers.add(
            name=COMPILER_OPTIONS_NAME)
    entry.parameter_map.clear()
    for key, value in options.items():
        entry.parameter_map[key].CopyFrom(_attr(key, value))
    return result


# -- the run plan of a traced run (a tensorflux extension) ----------------------------
def run_plan(run_metadata) -> list:
    """The run plan of a traced `Session.run` as text lines, one per step in the order
    they ran: "cluster_0 on cpu: a, b" for a compiled cluster, "host: name (Type)" for
    a host op."""
    return [d.thread_names.get(0, "") for d in run_metadata.step_stats.dev_stats]


def step_kind(dev_stats) -> str:
    """"xla:cluster_<n>" when a DeviceStepStats of a traced run is a compiled cluster,
    "host" when it is a host op."""
    line = dev_stats.thread_names.get(0, "")
    return "host" if line.startswith("host:") else "xla:" + line.split(" ", 1)[0]
