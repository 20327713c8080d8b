"""`tf.config`: devices, threading, soft placement and optimizer settings.

Devices are JAX's, under TF's names: `PhysicalDevice('/physical_device:GPU:0', 'GPU')`,
`LogicalDevice('/job:localhost/replica:0/task:0/device:GPU:0', 'GPU')` (device types
"CPU", "GPU", "TPU"). Settings that Sessions read become the defaults of Sessions created
without a config (`runtime/config.session_defaults`): soft placement (on by default
here, see docs/architecture.md "Devices"), the thread counts and the JIT level. The rest
is stored and returned with TF's validation and errors but does not change how this
runtime runs (each function's docstring says so). As in TF, `list_logical_devices`
initializes the runtime; device configuration (visible devices, memory growth, logical
devices, thread counts) can no longer change after that.
"""

from __future__ import annotations

import collections
import threading

import jax

from tensorflux._src.runtime import config as _runtime_config

_TYPES = (("CPU", "cpu"), ("GPU", "gpu"), ("TPU", "tpu"))

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])


class LogicalDeviceConfiguration(collections.namedtuple(
        "LogicalDeviceConfiguration",
        ["memory_limit", "experimental_priority", "experimental_device_ordinal"])):
    """How one logical device on a physical device is configured (memory limit in MB)."""

    def __new__(cls, memory_limit=None, experimental_priority=None,
                experimental_device_ordinal=None):
        return super().__new__(cls, memory_limit, experimental_priority,
                               experimental_device_ordinal)


VirtualDeviceConfiguration = LogicalDeviceConfiguration


class ClusterDeviceFilters:
    """Which devices each task of a cluster may see (for `experimental_connect_to_cluster`)."""

    def __init__(self):
        self._device_filters = {}

    def set_device_filters(self, job_name, task_index, device_filters):
        """Sets the device filters of task `task_index` of `job_name`."""
        if not all(isinstance(f, str) for f in device_filters):
            raise ValueError("device_filters must be a list of strings")
        self._device_filters.setdefault(job_name, {})[task_index] = list(device_filters)

    def _as_dict(self):
        return {job: dict(tasks) for job, tasks in self._device_filters.items()}


class _Context:
    """The process-wide settings; device lists are read from JAX on first use."""

    def __init__(self):
        self.lock = threading.Lock()
        self.physical = None
        self.jax_devices = {}
        self.visible = None
        self.memory_growth = {}
        self.virtual = {}
        self.initialized = False
        self.intra_op = 0
        self.inter_op = 0
        self.jit = False
        self.optimizer_options = {}
        self.device_policy = "silent"
        self.synchronous = True
        self.mlir_bridge = False
        self.tf32 = True
        self.run_functions_eagerly = False
        self.cluster = None

    def physical_devices(self):
        with self.lock:
            if self.physical is None:
                devices = []
                for tf_type, platform in _TYPES:
                    try:
                        found = jax.devices(platform)
                    except RuntimeError:  # no such backend on this machine
                        continue
                    for i, d in enumerate(found):
                        pd = PhysicalDevice(f"/physical_device:{tf_type}:{i}", tf_type)
                        devices.append(pd)
                        self.jax_devices[pd] = d
                self.physical = devices
                self.visible = list(devices)
            return self.physical


_context = _Context()


def _check_device(device):
    if device not in _context.physical_devices():
        raise ValueError(f"Unrecognized device: {device!r}")


def _by_type(devices, device_type):
    return [d for d in devices if device_type is None or d.device_type == device_type]


def list_physical_devices(device_type=None):
    """The `PhysicalDevice`s JAX sees (optionally only those of `device_type`)."""
    return _by_type(_context.physical_devices(), device_type)


def list_logical_devices(device_type=None):
    """One `LogicalDevice` per visible physical device; initializes the runtime.

    Logical device configurations are kept but do not split devices here (JAX's
    devices are fixed when it starts), so each visible device is one logical device.
    """
    _context.physical_devices()
    _context.initialized = True
    counts = collections.Counter()
    out = []
    for d in _context.physical:
        if d in _context.visible:
            index = counts[d.device_type]
            counts[d.device_type] += 1
            out.append(LogicalDevice(
                f"/job:localhost/replica:0/task:0/device:{d.device_type}:{index}",
                d.device_type))
    return _by_type(out, device_type)


def get_visible_devices(device_type=None):
    """The physical devices marked visible (all of them unless set_visible_devices)."""
    _context.physical_devices()
    return _by_type(_context.visible, device_type)


def set_visible_devices(devices, device_type=None):
    """Marks which physical devices (of `device_type`, or all) are visible.

    Here this changes what `list_logical_devices` reports; ops placed with tf.device
    still run on any device JAX has.
    """
    _context.physical_devices()
    if not isinstance(devices, list):
        devices = [devices]
    for d in devices:
        if d not in _context.physical or (device_type is not None
                                           and d.device_type != device_type):
            raise ValueError(f"Unrecognized device: {d!r}")
    visible = [] if device_type is None else [
        d for d in _context.visible if d.device_type != device_type]
    visible += devices
    if visible == _context.visible:
        return
    if _context.initialized:
        raise RuntimeError("Visible devices cannot be modified after being initialized")
    _context.visible = visible


def get_memory_growth(device):
    """Whether memory growth is set for a `PhysicalDevice`."""
    _check_device(device)
    return _context.memory_growth.get(device, False)


def set_memory_growth(device, enable):
    """Stores whether a GPU allocates memory as needed. No effect here: JAX's allocator
    is configured by XLA_PYTHON_CLIENT_PREALLOCATE before it starts."""
    _check_device(device)
    if device in _context.virtual:
        raise ValueError("Cannot set memory growth on device when virtual devices configured")
    if device.device_type != "GPU":
        raise ValueError("Cannot set memory growth on non-GPU devices")
    if _context.memory_growth.get(device) == enable:
        return
    if _context.initialized:
        raise RuntimeError("Physical devices cannot be modified after being initialized")
    _context.memory_growth[device] = enable


def get_logical_device_configuration(device):
    """The `LogicalDeviceConfiguration`s set for `device`, or None."""
    _check_device(device)
    return _context.virtual.get(device)


def set_logical_device_configuration(device, logical_devices):
    """Stores how `device` is split into logical devices, with TF's checks. No effect on
    the devices here (see list_logical_devices)."""
    _check_device(device)
    if device.device_type == "CPU":
        for vdev in logical_devices:
            if vdev.memory_limit is not None:
                raise ValueError("Setting memory limit on CPU virtual devices is currently "
                                 "not supported")
            if vdev.experimental_priority is not None:
                raise ValueError("Setting experimental_priority on CPU virtual devices is "
                                 "currently not supported")
    elif device.device_type == "GPU":
        for vdev in logical_devices:
            if vdev.memory_limit is None:
                raise ValueError("Setting memory limit is required for GPU virtual devices")
    else:
        raise ValueError(f"Virtual devices are not supported for {device.device_type}")
    if _context.virtual.get(device) == logical_devices:
        return
    if _context.initialized:
        raise RuntimeError("Virtual devices cannot be modified after being initialized")
    _context.virtual[device] = logical_devices


get_virtual_device_configuration = get_logical_device_configuration
set_virtual_device_configuration = set_logical_device_configuration


def get_device_details(device):
    """A dict of details of a physical GPU (`device_name`, `compute_capability`); {} for
    other devices."""
    _check_device(device)
    if device.device_type != "GPU":
        return {}
    d = _context.jax_devices[device]
    details = {"device_name": getattr(d, "device_kind", "")}
    capability = getattr(d, "compute_capability", None)
    if capability:
        details["compute_capability"] = tuple(int(x) for x in str(capability).split(".")[:2])
    return details


def _jax_device_named(device):
    """The JAX device for a device string such as 'GPU:0' or '/device:GPU:0'."""
    from tensorflux._src.framework import device as pydev
    spec = pydev.parse(device if "/" in device else "/device:" + device)
    matches = [pd for pd in list_physical_devices(spec.device_type)
               if pd.name.endswith(f":{spec.device_index or 0}")]
    if not matches:
        raise ValueError(f"No matching devices found for '{device}'")
    return _context.jax_devices[matches[0]]


def get_memory_info(device):
    """`{'current': bytes, 'peak': bytes}` in use on `device` ('GPU:0'), from JAX's
    allocator statistics; ValueError for devices without them (CPU)."""
    stats = _jax_device_named(device).memory_stats()
    if not stats:
        raise ValueError(f"Memory info is not supported for device '{device}'")
    return {"current": int(stats.get("bytes_in_use", 0)),
            "peak": int(stats.get("peak_bytes_in_use", 0))}


def get_memory_usage(device):
    """The bytes in use on `device` (deprecated: get_memory_info(device)['current'])."""
    return get_memory_info(device)["current"]


def reset_memory_stats(device):
    """Checks `device` has memory statistics. JAX cannot reset its peak counter, so the
    peak keeps counting from the start of the process."""
    get_memory_info(device)


def get_intra_op_parallelism_threads():
    """Threads used within one op (0: the runtime chooses)."""
    return _context.intra_op


def set_intra_op_parallelism_threads(num_threads):
    """Stores the intra-op thread count as Sessions' default ConfigProto field. XLA's
    CPU thread pool is sized when JAX starts, so it does not change the runtime."""
    if _context.initialized and num_threads != _context.intra_op:
        raise RuntimeError("Intra op parallelism cannot be modified after initialization.")
    _context.intra_op = num_threads
    _runtime_config.session_defaults["intra_op_parallelism_threads"] = num_threads


def get_inter_op_parallelism_threads():
    """Threads used between independent ops (0: the runtime chooses)."""
    return _context.inter_op


def set_inter_op_parallelism_threads(num_threads):
    """Stores the inter-op thread count as Sessions' default ConfigProto field (no
    effect on scheduling here: a run is one or a few compiled XLA calls)."""
    if _context.initialized and num_threads != _context.inter_op:
        raise RuntimeError("Inter op parallelism cannot be modified after initialization.")
    _context.inter_op = num_threads
    _runtime_config.session_defaults["inter_op_parallelism_threads"] = num_threads


def get_soft_device_placement():
    """Whether an op placed on a device that does not exist runs on one that does."""
    return _runtime_config.session_defaults.get(
        "allow_soft_placement", _runtime_config.SOFT_PLACEMENT_DEFAULT)


def set_soft_device_placement(enabled):
    """Sets soft placement for Sessions created without a config (on by default here)."""
    _runtime_config.session_defaults["allow_soft_placement"] = bool(enabled)


def get_optimizer_jit():
    """Whether JIT compilation was asked for (everything is XLA-compiled here anyway)."""
    return _context.jit


def set_optimizer_jit(enabled):
    """Stores the JIT setting as Sessions' default `global_jit_level` (ON_1 when
    enabled); every run is compiled by XLA either way."""
    _context.jit = bool(enabled)
    _runtime_config.session_defaults["global_jit_level"] = 1 if enabled else 0


def get_optimizer_experimental_options():
    """The Grappler options set with `set_experimental_options`."""
    return dict(_context.optimizer_options)


def set_optimizer_experimental_options(options):
    """Stores Grappler options (layout_optimizer, constant_folding, ...). No effect:
    tensorflux's own passes (prune, CSE, folding) always run."""
    _context.optimizer_options.update(options)


def get_device_policy():
    """The device policy ('silent', 'silent_for_int32', 'warn' or 'explicit')."""
    return _context.device_policy


def set_device_policy(device_policy):
    """Stores the eager device policy (None: the default, 'silent'). Values crossing
    devices are always copied silently here."""
    if device_policy not in (None, "silent", "silent_for_int32", "warn", "explicit"):
        raise ValueError(f"Not a valid device policy: {device_policy!r}")
    _context.device_policy = device_policy or "silent"


def get_synchronous_execution():
    """Whether operations run synchronously."""
    return _context.synchronous


def set_synchronous_execution(enable):
    """Stores the eager execution mode (None: default, synchronous). Session.run always
    returns finished values here."""
    _context.synchronous = True if enable is None else bool(enable)


def enable_mlir_bridge():
    """Stores the MLIR bridge flag (no bridge here: graphs are lowered to XLA directly)."""
    _context.mlir_bridge = True


def disable_mlir_bridge():
    """Clears the MLIR bridge flag."""
    _context.mlir_bridge = False


def tensor_float_32_execution_enabled():
    """Whether float32 matmuls and convolutions may use TensorFloat-32 on GPUs."""
    return _context.tf32


def enable_tensor_float_32_execution(enabled):
    """Allows or forbids TensorFloat-32: when disabled, JAX's default matmul precision
    becomes full float32 (for executables compiled afterwards)."""
    _context.tf32 = bool(enabled)
    jax.config.update("jax_default_matmul_precision", None if enabled else "float32")


def functions_run_eagerly():
    """Whether tf.functions run eagerly (there is no eager mode here: False unless set)."""
    return _context.run_functions_eagerly


def run_functions_eagerly(run_eagerly):
    """Stores the setting; graphs always run through Session here."""
    _context.run_functions_eagerly = bool(run_eagerly)


experimental_functions_run_eagerly = functions_run_eagerly
experimental_run_functions_eagerly = run_functions_eagerly


def experimental_connect_to_cluster(cluster_spec_or_resolver, job_name="localhost",
                                    task_index=0, protocol=None,
                                    make_master_device_default=True,
                                    cluster_device_filters=None):
    """Records the cluster. As with `tf.train.Server` targets, there is no remote
    runtime: ops placed on a remote task's devices run in this process."""
    from tensorflux._src.train.server_lib import ClusterSpec
    spec = cluster_spec_or_resolver
    if hasattr(spec, "cluster_spec") and not isinstance(spec, ClusterSpec):
        spec = spec.cluster_spec()
    if not isinstance(spec, ClusterSpec):
        raise ValueError("`cluster_spec_or_resolver` must be a `ClusterSpec` or a "
                         "`ClusterResolver`.")
    if cluster_device_filters is not None and not isinstance(cluster_device_filters,
                                                               ClusterDeviceFilters):
        raise ValueError("`cluster_device_filters` must be an instance of "
                         "`tf.config.experimental.ClusterDeviceFilters`.")
    _context.cluster = {"cluster_spec": spec, "job_name": job_name, "task_index": task_index,
                        "protocol": protocol or "grpc",
                        "make_master_device_default": make_master_device_default}


def experimental_connect_to_host(remote_host=None, job_name="worker"):
    """`experimental_connect_to_cluster` with a one-job cluster of `remote_host`(s)."""
    from tensorflux._src.train.server_lib import ClusterSpec
    if not remote_host:
        raise ValueError("Must provide at least one remote_host")
    hosts = [remote_host] if isinstance(remote_host, str) else list(remote_host)
    hosts = [h[len("grpc://"):] if h.startswith("grpc://") else h for h in hosts]
    experimental_connect_to_cluster(ClusterSpec({job_name: hosts}))
