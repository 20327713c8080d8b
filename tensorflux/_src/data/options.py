"""`tf.data.Options` and its groups (threading, optimization, autotune, distribute,
service), with TF's fields, types, merging and errors.

Options are accepted and stored: `with_options` attaches them to a dataset and
`Dataset.options()` merges those of the whole pipeline (the later setting wins). The
pipeline here does not consult them: elements always come in order (a superset of
`deterministic=False`), and parallelism is set by num_parallel_calls.
"""

from __future__ import annotations

import enum

from tensorflux._src.data.dataset_ops import Dataset


class AutoShardPolicy(enum.IntEnum):
    """How a distributed input pipeline is sharded (stored; no sharding happens here)."""
    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class ExternalStatePolicy(enum.Enum):
    """What checkpointing an iterator does with external state (stored)."""
    WARN = 0
    IGNORE = 1
    FAIL = 2


class AutotuneAlgorithm(enum.Enum):
    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


def _option(name, ty, doc, default_factory=lambda: None):
    def get(self):
        if name not in self._options:
            self._options[name] = default_factory()
        return self._options[name]

    def set_(self, value):
        if value is not None and not isinstance(value, ty):
            raise TypeError(f"Property \"{name}\" must be of type {ty}, got: {value} "
                            f"(type: {type(value)}).")
        self._options[name] = value

    return property(get, set_, None, doc)


class OptionsBase:
    """A set of options: only declared properties may be set, with their types."""

    def __init__(self):
        object.__setattr__(self, "_options", {})
        object.__setattr__(self, "_mutable", True)

    def __eq__(self, other):
        if not isinstance(other, type(self)):
            return NotImplemented
        names = {n for n in dir(type(self)) if isinstance(getattr(type(self), n), property)}
        return all(getattr(self, n) == getattr(other, n) for n in names)

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = None

    def __setattr__(self, name, value):
        if not self._mutable:
            raise ValueError("Mutating `tf.Options()` returned by `tf.data.Dataset.options()` "
                             "has no effect. Use `tf.data.Dataset.with_options(options)` to "
                             "set or update dataset options.")
        if isinstance(getattr(type(self), name, None), property):
            object.__setattr__(self, name, value)
        else:
            raise AttributeError(f"Cannot set the property {name} on {type(self).__name__}.")

    def __repr__(self):
        set_ = ", ".join(f"{k}={v!r}" for k, v in sorted(self._options.items())
                         if v is not None)
        return f"{type(self).__name__}({set_})"

    def _set_mutable(self, mutable):
        object.__setattr__(self, "_mutable", mutable)
        for value in self._options.values():
            if isinstance(value, OptionsBase):
                value._set_mutable(mutable)


def merge_options(*options_list):
    """The options set by any of `options_list` (of one type); later ones win."""
    if not options_list:
        raise ValueError("At least one options object is needed to merge.")
    kind = type(options_list[0])
    for options in options_list:
        if not isinstance(options, kind):
            raise TypeError(f"Could not merge incompatible options of type {type(options)} "
                            f"and {kind}.")
    result = kind()
    for options in options_list:
        for name, value in options._options.items():
            if value is None:
                continue
            current = result._options.get(name)
            if isinstance(value, OptionsBase) and isinstance(current, OptionsBase):
                value = merge_options(current, value)
            elif isinstance(value, OptionsBase):
                value = merge_options(value)
            result._options[name] = value
    return result


class ThreadingOptions(OptionsBase):
    """The threads a pipeline may use (stored)."""
    max_intra_op_parallelism = _option(
        "max_intra_op_parallelism", int,
        "If set, it overrides the maximum degree of intra-op parallelism.")
    private_threadpool_size = _option(
        "private_threadpool_size", int,
        "If set, the dataset will use a private threadpool of the given size.")


class AutotuneOptions(OptionsBase):
    enabled = _option("enabled", bool, "Whether to automatically tune performance knobs.")
    cpu_budget = _option("cpu_budget", int, "CPU budget for autotuning.")
    ram_budget = _option("ram_budget", int, "RAM budget for autotuning, in bytes.")
    autotune_algorithm = _option("autotune_algorithm", AutotuneAlgorithm,
                                 "The algorithm used for autotuning.")


class DistributeOptions(OptionsBase):
    auto_shard = _option("auto_shard", bool, "TF 1.15: whether to shard automatically.")
    auto_shard_policy = _option("auto_shard_policy", AutoShardPolicy,
                                "The type of sharding that auto-shard should attempt.",
                                lambda: AutoShardPolicy.AUTO)
    num_devices = _option("num_devices", int, "The number of devices attached to this "
                                              "input pipeline.")


_OPTIMIZATIONS = (
    "apply_default_optimizations", "autotune", "autotune_buffers", "filter_fusion",
    "filter_parallelization", "filter_with_random_uniform_fusion", "hoist_random_uniform",
    "inject_prefetch", "map_and_batch_fusion", "map_and_filter_fusion", "map_fusion",
    "map_parallelization", "noop_elimination", "parallel_batch",
    "reorder_data_discarding_ops", "seq_interleave_prefetch", "shuffle_and_repeat_fusion",
    "warm_start")


class OptimizationOptions(OptionsBase):
    """Which static optimizations to apply (stored: map followed by batch is always
    fused here)."""
    locals().update({name: _option(name, bool, f"Whether to apply {name}.")
                     for name in _OPTIMIZATIONS})
    autotune_cpu_budget = _option("autotune_cpu_budget", int, "CPU budget for autotuning.")
    autotune_ram_budget = _option("autotune_ram_budget", int, "RAM budget for autotuning.")


class ServiceOptions(OptionsBase):
    pinned = _option("pinned", bool, "Whether to pin the data service's buffers.")


class Options(OptionsBase):
    """`tf.data.Options`: the options of a dataset (see `with_options`)."""
    autotune = _option("autotune", AutotuneOptions, "Autotuning options.", AutotuneOptions)
    deterministic = _option("deterministic", bool,
                            "Whether elements must come in a deterministic order.")
    experimental_deterministic = deterministic
    dataset_name = _option("dataset_name", str, "A name for the dataset.")
    experimental_distribute = _option("experimental_distribute", DistributeOptions,
                                      "Distribution options.", DistributeOptions)
    experimental_external_state_policy = _option(
        "experimental_external_state_policy", ExternalStatePolicy,
        "What to do with external state when checkpointing.")
    experimental_optimization = _option("experimental_optimization", OptimizationOptions,
                                        "Static optimizations.", OptimizationOptions)
    experimental_slack = _option("experimental_slack", bool, "Whether to introduce slack.")
    experimental_symbolic_checkpoint = _option("experimental_symbolic_checkpoint", bool,
                                               "Whether to checkpoint symbolically.")
    experimental_warm_start = _option("experimental_warm_start", bool,
                                      "Whether to start background threads eagerly.")
    threading = _option("threading", ThreadingOptions, "Threading options.",
                        ThreadingOptions)
    experimental_threading = threading

    def merge(self, options):
        """This object's options merged with `options` (which win)."""
        return merge_options(self, options)


class OptionsDataset(Dataset):
    """`with_options`: the input with options attached."""

    def __init__(self, input_dataset, options):
        if not isinstance(options, Options):
            raise TypeError(f"options must be a tf.data.Options, got {type(options)}")
        self._children = (input_dataset,)
        self._structure = input_dataset._structure
        self._own_options = merge_options(options)

    def _iterate(self, ctx):
        return self._children[0]._iterate(ctx)

    def _iterate_batches(self, ctx, batch_size, drop_remainder):
        return self._children[0]._iterate_batches(ctx, batch_size, drop_remainder)

    def _cardinality(self, ctx):
        return self._children[0]._cardinality(ctx)


__all__ = ["Options", "ThreadingOptions", "AutotuneOptions", "DistributeOptions",
           "OptimizationOptions", "ServiceOptions", "AutoShardPolicy", "ExternalStatePolicy",
           "AutotuneAlgorithm", "merge_options"]
