"""Synchronous data parallelism over many hosts: one process per host, SPMD with
`jax.distributed`.

    # on every host, with TF_CONFIG set for that host (see below):
    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
    with strategy.scope():
        x = tf.placeholder(tf.float32, [None, 784])      # batch dimension unknown
        ...
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = tf.global_variables_initializer()
    sess.run(init)
    sess.run(train_op, {x: this_workers_batch, ...})     # each worker its own slice

Every worker runs the same program (SPMD, as with TF's MultiWorkerMirroredStrategy).
The strategy starts `jax.distributed` (the coordinator is worker 0's address) and
marks ops like `MirroredStrategy` does, over a 1-D mesh of all processes' devices
(ordered by process, so worker k's devices follow worker k-1's). A compiled cluster
holding marked ops is one XLA program over that mesh; XLA's SPMD partitioner inserts
the all-reduces, which run over gloo between CPU processes (NCCL between GPU hosts).

What a worker passes in, per argument of such a cluster:

- a fed value (or a value made on the host from fed values or input pipelines, e.g. a
  tf.data iterator's batch) whose tensor has an unknown first dimension: this worker's
  slice of the global batch. The slices are joined along axis 0 in worker order
  (`jax.make_array_from_process_local_data`), so the graph computes on the *global*
  batch, as it would on one device: a mean loss is the mean over all workers' rows and
  the gradients are those of the whole batch. Every worker must feed the same number
  of rows, a multiple of its local device count.
- anything else taken from the host (scalars such as a fed learning rate, values with
  a known first dimension, variables initialized outside the strategy, random key rows
  of unseeded ops, host ops' results computed from global values): worker 0's value,
  broadcast to all (TF's multi-worker strategy also starts every worker from the
  chief's initial variables).
- values computed by an earlier multi-worker step (variables after a step, a cluster's
  outputs) are already global and pass as they are.

All outputs are replicated, so every worker fetches the global value (the loss over the
global batch, identical variables), and only the chief (worker 0, `is_chief`) should
write checkpoints and summaries, as in TF.

Where the settings come from, first found wins (field by field):

1. the arguments `coordinator_address`, `num_processes`, `process_id`;
2. a cluster resolver (`cluster_resolver=`, default `TFConfigClusterResolver`: the
   `TF_CONFIG` environment variable). The "chief" task (if any) is process 0, then
   "worker" 0, 1, ...; process 0's address ("host:port") is the coordinator's, which
   it listens on (the collectives pick their own ports). An "evaluator" task runs
   alone, as in TF; a "ps" job is an error (parameter servers are another strategy);
3. the environment: `JAX_COORDINATOR_ADDRESS`, `JAX_NUM_PROCESSES`, `JAX_PROCESS_ID`.

With none of them (and jax.distributed not started by the caller) the strategy is one
worker over this process's devices, like `MirroredStrategy`.

Launching by hand, one process per host (here 2 hosts; ports must be reachable):

    # host a.example:
    TF_CONFIG='{"cluster": {"worker": ["a.example:12345", "b.example:12345"]},
                "task": {"type": "worker", "index": 0}}' python train.py
    # host b.example: the same cluster, "index": 1

On one machine, `python -m tensorflux.distribute.launch --num_processes 2 -- train.py`
starts the processes with TF_CONFIG on free loopback ports (see launch.py).

The strategy must be created before anything runs on JAX in the process (jax.distributed
starts before JAX's backends), and only once per process (a second strategy with the same
settings reuses the running jax.distributed).
"""

from __future__ import annotations

import enum
import os
import weakref

import jax
import numpy as np

from tensorflux._src.compiler import run_plan as _run_plan
from tensorflux._src.runtime import devices as _devices
from tensorflux.distribute import cluster_resolver as _resolver_lib
from tensorflux.distribute.mirrored_strategy import MirroredStrategy

_ENV = {"coordinator_address": "JAX_COORDINATOR_ADDRESS",
        "num_processes": "JAX_NUM_PROCESSES",
        "process_id": "JAX_PROCESS_ID"}
_WORKER_JOBS = ("chief", "worker")
_PLACEHOLDERS = ("Placeholder", "PlaceholderV2", "PlaceholderWithDefault")

# (coordinator_address, num_processes, process_id) of the jax.distributed this module
# started in this process, if any.
_started = None


class CollectiveCommunication(enum.Enum):
    """TF's choice of all-reduce implementation. Accepted for TF's signature: XLA picks
    the collectives (gloo between CPU processes, NCCL between GPUs)."""
    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


class MultiWorkerMirroredStrategy(MirroredStrategy):
    """`MultiWorkerMirroredStrategy(communication=CollectiveCommunication.AUTO,
    cluster_resolver=None, *, coordinator_address=None, num_processes=None,
    process_id=None, initialization_timeout=300)`: see the module docstring.

    `initialization_timeout`: seconds to wait for all processes to join."""

    def __init__(self, communication=CollectiveCommunication.AUTO, cluster_resolver=None,
                 *, coordinator_address=None, num_processes=None, process_id=None,
                 initialization_timeout=300):
        if isinstance(communication, str):
            communication = CollectiveCommunication(communication.upper())
        if not isinstance(communication, CollectiveCommunication):
            raise ValueError(f"communication must be a CollectiveCommunication (AUTO, RING "
                             f"or NCCL), not {communication!r}.")
        del communication  # checked for TF's signature; XLA chooses the collectives
        self._cluster_resolver = (cluster_resolver if cluster_resolver is not None
                                  else _resolver_lib.TFConfigClusterResolver())
        settings, tasks = resolve(self._cluster_resolver, coordinator_address,
                                  num_processes, process_id)
        if settings is not None:
            _start(*settings, initialization_timeout=initialization_timeout)
        self._tasks = tasks or [("worker", i) for i in range(jax.process_count())]
        self._replicas = WorkerReplicas(jax.devices())

    @property
    def cluster_resolver(self):
        return self._cluster_resolver

    @property
    def num_workers(self):
        """Processes taking part (1 when running alone)."""
        return self._replicas.num_processes

    @property
    def worker_index(self):
        """This process's position among the workers (its jax.process_index())."""
        return jax.process_index()

    @property
    def is_chief(self):
        """Worker 0: the one that should write checkpoints and summaries."""
        return jax.process_index() == 0

    @property
    def devices(self):
        """This worker's devices, as TF names them."""
        job, index = self._tasks[jax.process_index()]
        local = self._replicas.local_devices
        return tuple(f"/job:{job}/replica:0/task:{index}/device:{d.platform.upper()}:{i}"
                     for i, d in enumerate(local))

    def __repr__(self):
        return (f"MultiWorkerMirroredStrategy(num_workers={self.num_workers}, "
                f"worker_index={self.worker_index}, "
                f"num_replicas_in_sync={self.num_replicas_in_sync})")


class WorkerReplicas(_devices.Replicas):
    """`Replicas` over every process's devices: arguments are placed as the module
    docstring says, and all outputs are replicated so each worker can read them."""

    def __init__(self, jax_devices):
        super().__init__(sorted(jax_devices, key=lambda d: (d.process_index, d.id)))
        self.num_processes = len({d.process_index for d in self.devices})
        me = jax.process_index()
        self.local_devices = [d for d in self.devices if d.process_index == me]
        # Worker 0's values for all: each value stacked once per device (zeros on the
        # other workers), split over the mesh, then row 0 taken, replicated.
        self._row_zero = jax.jit(lambda *xs: tuple(x[0] for x in xs),
                                 out_shardings=self.replicated)

    def jit(self, fn, data_inputs, **kwargs):
        if self.num_processes == 1:  # one worker: exactly MirroredStrategy's placement
            return super().jit(fn, data_inputs, **kwargs)
        jitted = jax.jit(fn, out_shardings=self.replicated, **kwargs)
        data_args = len(data_inputs)
        per_worker = [_is_per_worker(t) for t in data_inputs]
        names = [t.name for t in data_inputs]
        converted = {}  # argument position -> (weakref to a local array, its global copy)

        def call(*args):
            placed, from_chief = list(args), []
            for i, value in enumerate(args):
                if isinstance(value, jax.Array) and not value.is_fully_addressable:
                    continue  # already global: computed by an earlier multi-worker step
                if i < data_args and per_worker[i] and np.ndim(value) >= 1:
                    placed[i] = self._join_slices(value, names[i])
                    continue
                seen = converted.get(i)
                if seen is not None and seen[0]() is value and not seen[1].is_deleted():
                    placed[i] = seen[1]  # e.g. a large constant, made global once
                else:
                    from_chief.append(i)
            if from_chief:
                values = self.from_worker_zero([args[i] for i in from_chief])
                for i, value in zip(from_chief, values):
                    placed[i] = value
                    if isinstance(args[i], jax.Array):
                        converted[i] = (weakref.ref(args[i]), value)
            return jitted(*placed)

        return call

    def _join_slices(self, value, name):
        local = np.asarray(value)
        rows, count = local.shape[0], len(self.local_devices)
        if rows % count:
            raise ValueError(
                f"Worker {jax.process_index()} fed {rows} rows for {name!r} (its slice of "
                f"the global batch), which its {count} local devices cannot share evenly; "
                f"expected a multiple of {count} rows on every worker.")
        global_shape = (rows * self.num_processes,) + local.shape[1:]
        return jax.make_array_from_process_local_data(self.split, local, global_shape)

    def from_worker_zero(self, values):
        """Global replicated arrays holding worker 0's `values` (one collective call)."""
        count, total = len(self.local_devices), len(self.devices)
        chief = jax.process_index() == 0
        stacked = []
        for value in values:
            local = np.asarray(value)
            rows = (np.broadcast_to(local, (count,) + local.shape) if chief
                    else np.zeros((count,) + local.shape, local.dtype))
            stacked.append(jax.make_array_from_process_local_data(
                self.split, rows, (total,) + local.shape))
        return self._row_zero(*stacked)


def _is_per_worker(tensor):
    """Whether `tensor`'s value, coming from the host, is a worker's slice of the batch:
    an unknown (or unknown-rank) first dimension, and not made on the host from values
    that compiled steps computed (those are global, so the same on every worker)."""
    dims = tensor.shape.dims
    if dims is not None and (not dims or dims[0].value is not None):
        return False
    if not _run_plan.runs_on_host(tensor.op):
        return True  # fed (a compiled step's result would arrive global)
    seen, pending = set(), [tensor.op]
    while pending:  # host ops, back to where their inputs come from
        op = pending.pop()
        if op in seen:
            continue
        seen.add(op)
        for producer in (t.op for t in op.inputs):
            if _run_plan.runs_on_host(producer):
                pending.append(producer)
            elif producer.inputs and producer.type not in _PLACEHOLDERS:
                return False  # a compiled step's result (taken as computed, not fed)
    return True


# -- settings -------------------------------------------------------------------------

def resolve(cluster_resolver=None, coordinator_address=None, num_processes=None,
            process_id=None):
    """((coordinator_address, num_processes, process_id) or None to run alone, and the
    processes' (job, task index) list from the cluster, or None). Raises ValueError
    naming the setting, what it holds and what was expected."""
    given = {"coordinator_address": coordinator_address, "num_processes": num_processes,
             "process_id": process_id}
    from_cluster, tasks = _from_cluster(cluster_resolver)
    if from_cluster == "alone":
        return None, None
    settings = {}
    for key, value in given.items():
        if value is None and from_cluster is not None:
            value = from_cluster[key]
        if value is None and os.environ.get(_ENV[key]):
            value = os.environ[_ENV[key]]
            if key != "coordinator_address":
                try:
                    value = int(value)
                except ValueError:
                    raise ValueError(f"{_ENV[key]}={value!r} is not an integer; expected "
                                     f"the {key.replace('_', ' ')}.") from None
        settings[key] = value
    if from_cluster is not None:
        for key in ("num_processes", "process_id"):
            if given[key] is not None and given[key] != from_cluster[key]:
                raise ValueError(
                    f"{key}={given[key]} was given, but {_describe(cluster_resolver)} says "
                    f"{from_cluster[key]} ({_count_text(tasks)}, this task is "
                    f"{tasks[from_cluster['process_id']][0]} "
                    f"{tasks[from_cluster['process_id']][1]}); expected "
                    f"{key}={from_cluster[key]} or no {key} argument.")
    if all(v is None for v in settings.values()):
        return None, None
    missing = [k for k, v in settings.items() if v is None]
    if missing:
        found = ", ".join(f"{k}={v!r}" for k, v in settings.items() if v is not None)
        raise ValueError(
            f"Multi-worker settings are incomplete: {found} was set, but "
            f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing; "
            f"expected all three from the arguments, TF_CONFIG, or the environment "
            f"({', '.join(_ENV[k] for k in missing)}).")
    count, index = settings["num_processes"], settings["process_id"]
    if not isinstance(count, int) or count < 1:
        raise ValueError(f"num_processes={count!r}; expected a positive integer.")
    if not isinstance(index, int) or not 0 <= index < count:
        raise ValueError(f"process_id={index!r}; expected an integer in [0, {count - 1}] "
                         f"for num_processes={count}.")
    return (str(settings["coordinator_address"]), count, index), tasks


def _from_cluster(cluster_resolver):
    """The settings a cluster resolver (TF_CONFIG) gives: a dict, None when it describes
    no cluster, or "alone" for an evaluator task (it runs by itself, as in TF)."""
    if cluster_resolver is None:
        return None, None
    spec = cluster_resolver.cluster_spec()
    if not spec.jobs:
        return None, None
    where = _describe(cluster_resolver)
    task_type, task_id = cluster_resolver.task_type, cluster_resolver.task_id
    if task_type == "evaluator":
        return "alone", None
    others = [job for job in spec.jobs if job not in _WORKER_JOBS + ("evaluator",)]
    if others:
        raise ValueError(
            f"{where} has the job(s) {others}, but MultiWorkerMirroredStrategy runs only "
            f"'chief' and 'worker' tasks (and a separate 'evaluator'); got the cluster "
            f"{spec.as_dict()}.")
    tasks = []
    for job in _WORKER_JOBS:
        if job not in spec.jobs:
            continue
        indices = spec.task_indices(job)
        if indices != list(range(len(indices))):
            raise ValueError(f"{where}'s job {job!r} has tasks {indices}; expected tasks "
                             f"0..{len(indices) - 1} with no gaps.")
        tasks.extend((job, i) for i in indices)
    if not tasks:
        raise ValueError(f"{where}'s cluster {spec.as_dict()} has no 'chief' or 'worker' "
                         f"task; expected at least one.")
    if task_type is None or task_id is None:
        raise ValueError(
            f"{where} has a cluster but no task for this process (task type {task_type!r}, "
            f"index {task_id!r}); expected \"task\": {{\"type\": one of "
            f"{sorted({j for j, _ in tasks})}, \"index\": ...}} naming one of "
            f"{_count_text(tasks)}.")
    if (task_type, task_id) not in tasks:
        raise ValueError(
            f"{where} says this process is task {task_type!r} {task_id}, which is not in "
            f"the cluster; expected one of {[f'{j} {i}' for j, i in tasks]}.")
    first = spec.task_address(*tasks[0])
    return ({"coordinator_address": first, "num_processes": len(tasks),
             "process_id": tasks.index((task_type, task_id))}, tasks)


def _describe(cluster_resolver):
    if isinstance(cluster_resolver, _resolver_lib.TFConfigClusterResolver):
        return f"TF_CONFIG ({os.environ.get('TF_CONFIG', '')!r})"
    return f"the cluster resolver {type(cluster_resolver).__name__}"


def _count_text(tasks):
    jobs = {}
    for job, _ in tasks:
        jobs[job] = jobs.get(job, 0) + 1
    return (f"{len(tasks)} worker process(es): "
            + ", ".join(f"{n} {job}" for job, n in jobs.items()))


def _start(coordinator_address, num_processes, process_id, initialization_timeout=300):
    """Starts jax.distributed once per process (gloo collectives on CPU)."""
    global _started
    settings = (coordinator_address, num_processes, process_id)
    if _started is not None or _distributed_running():
        if _started is not None and _started != settings:
            raise ValueError(
                f"jax.distributed already runs in this process with coordinator_address="
                f"{_started[0]!r}, num_processes={_started[1]}, process_id={_started[2]}; "
                f"got coordinator_address={coordinator_address!r}, num_processes="
                f"{num_processes}, process_id={process_id}. One process joins one cluster.")
        if (jax.process_count(), jax.process_index()) != (num_processes, process_id):
            raise ValueError(
                f"jax.distributed already runs with {jax.process_count()} processes, this "
                f"one number {jax.process_index()}; the settings say num_processes="
                f"{num_processes}, process_id={process_id}.")
        return
    if _backends_started():
        raise RuntimeError(
            "MultiWorkerMirroredStrategy must be created before anything runs on JAX in "
            "this process (jax.distributed starts before JAX's devices do); create it "
            "first, before any Session.run.")
    # CPU processes all-reduce over gloo (unless the user chose MPI); GPUs use NCCL.
    if jax.config.jax_cpu_collectives_implementation != "mpi":
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=coordinator_address,
                               num_processes=num_processes, process_id=process_id,
                               initialization_timeout=int(initialization_timeout))
    _started = settings
    if jax.process_count() != num_processes:
        raise ValueError(f"jax.distributed started {jax.process_count()} processes; "
                         f"expected num_processes={num_processes}.")


def _distributed_running():
    is_initialized = getattr(jax.distributed, "is_initialized", None)
    return bool(is_initialized and is_initialized())


def _backends_started():
    try:
        from jax._src import xla_bridge
        return bool(xla_bridge.backends_are_initialized())
    except (ImportError, AttributeError):  # a JAX without it: let initialize() complain
        return False

