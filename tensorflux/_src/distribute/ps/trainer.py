"""`tf.distribute.ParameterServerTraining`: the driver of parameter-server training on Ray.

    def model_fn():                       # builds the model; called on every task
        x = tf.placeholder(tf.float32, [None, 64], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        logits = tf.layers.dense(x, 10)
        return tf.losses.sparse_softmax_cross_entropy(y, logits)

    def input_fn(worker_index, num_workers):   # each worker's feeds
        for xs, ys in batches(shard=worker_index, of=num_workers):
            yield {"x": xs, "y": ys}

    opt = tf.train.SyncReplicasOptimizer(tf.train.AdamOptimizer(1e-3),
                                         replicas_to_aggregate=2, total_num_replicas=3)
    with tf.distribute.ParameterServerTraining(model_fn, opt, input_fn, num_workers=3,
                                               num_ps=2, checkpoint_dir="ckpt") as job:
        result = job.train(max_steps=1000)

TF1's between-graph replication, on Ray instead of gRPC servers: each ps task and each
worker is a Ray actor (ps_task.py, worker_task.py); a local Ray instance is started
unless this process is already connected or `address` names a cluster. The driver
builds the model once (model_layout.py) to place the variables on the ps tasks with
`replica_device_setter` (round-robin, or `ps_strategy`) and to compute their initial
values, then starts the actors; workers pull parameters and push gradients straight
to the ps tasks through Ray's object store. The optimizer (an Optimizer, or a function
building one, e.g. with a schedule on `tf.train.get_global_step()`) is applied on the
ps tasks; a `SyncReplicasOptimizer` makes training synchronous with
`total_num_replicas - replicas_to_aggregate` backup workers.

The driver's loop watches the actors:

- a worker that dies (`RayActorError`) is replaced by a new actor that rejoins the
  job by pulling the current parameters;
- a ps task that dies is replaced, and every ps task restores the latest checkpoint
  (or the initial values before the first one), as TF1's chief does when a ps
  restarts: the whole model returns to one consistent step and training continues;
- the ps tasks write their checkpoint shards every `save_checkpoint_steps` steps and
  the driver commits each checkpoint once all its shards exist (checkpoints.py), so a
  task killed mid-save never leaves a half-written checkpoint; what a killed writer
  leaves behind is removed before training resumes and at the end.

At most `max_restarts` restarts per `train` call; then the last failure is raised.

`model_fn`, `input_fn` and the optimizer travel to the actors pickled (cloudpickle):
functions of the driver's script go by value; those of other modules must be
importable where the actors run (installed, or shipped with
`worker_options={"runtime_env": {"py_modules": [...]}}` and the same `ps_options`).
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import os
import time
import uuid

import numpy as np

from tensorflux._src.distribute.ps import checkpoints, model_layout, ray_runtime
from tensorflux._src.distribute.ps.model_layout import mean_metrics
from tensorflux._src.distribute.ps.ps_task import ParameterServerTask
from tensorflux._src.distribute.ps.worker_task import TOTALS, WorkerTask

_log = logging.getLogger("tensorflux")

DEFAULT_ACTOR_OPTIONS = {"num_cpus": 1, "scheduling_strategy": "SPREAD"}


@dataclasses.dataclass
class Progress:
    """What `on_progress` receives, about once per `progress_every_s`."""

    step: int  # the global step (the chief ps task's)
    max_steps: int
    steps_per_sec: float  # since the previous report
    metrics: dict  # mean of the loss and metrics applied since the previous report
    worker_restarts: int
    ps_restarts: int


@dataclasses.dataclass
class CheckpointInfo:
    """What `on_checkpoint` receives after each committed checkpoint."""

    step: int
    prefix: str
    metrics: dict  # mean loss (and metrics) of the updates since the previous checkpoint
    saved_at: float  # time.time() when the chief ps task wrote its shard


@dataclasses.dataclass
class TrainingResult:
    global_step: int
    seconds: float
    steps_per_sec: float  # global steps (updates applied) per second
    metrics: dict  # mean loss (and metrics) over the last 10% of the steps
    metrics_log: list  # (global step, {"loss": ..., ...}) per update applied
    gradients_applied: int  # summed over the ps tasks
    stale_gradients_dropped: int  # summed over the ps tasks (synchronous SGD)
    worker_steps: int  # gradients computed by all workers
    steps_by_worker: dict  # worker index -> gradients it computed (restarted ones too)
    bytes_pulled: int  # parameter bytes moved from ps tasks to workers
    bytes_pushed: int  # gradient bytes moved from workers to ps tasks
    worker_restarts: int
    ps_restarts: int
    restores: list  # (global step when a ps task was found dead, checkpoint restored)
    checkpoint: str | None  # the latest committed checkpoint

    @property
    def bytes_per_sec(self):
        return (self.bytes_pulled + self.bytes_pushed) / max(self.seconds, 1e-9)


def _count(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, received {name}={value!r}")
    return int(value)


def _inspect_optimizer(optimizer, num_workers):
    """(replicas_to_aggregate or None for asynchronous SGD) after checking `optimizer`."""
    import tensorflux as tf
    from tensorflux._src.train.optimizer import Optimizer
    from tensorflux._src.train.sync_replicas_optimizer import SyncReplicasOptimizer

    opt = optimizer
    if hasattr(optimizer, "build_shard_apply"):  # builds each ps's update itself
        return getattr(optimizer, "replicas_to_aggregate", None)
    if not isinstance(optimizer, Optimizer):
        if not callable(optimizer):
            raise TypeError(f"optimizer must be a tf.train.Optimizer or a function returning "
                            f"one; received optimizer={optimizer!r}")
        with tf.Graph().as_default():
            tf.train.create_global_step()
            opt = optimizer()
        if not isinstance(opt, Optimizer):
            raise TypeError(f"the optimizer function must return a tf.train.Optimizer; it "
                            f"returned {opt!r}")
    else:
        inner = opt._opt if isinstance(opt, SyncReplicasOptimizer) else opt
        if inner.variables():
            raise ValueError(f"optimizer {inner.get_name()!r} has already created variables "
                             f"in a graph; pass a new optimizer, or a function that builds "
                             f"one (e.g. optimizer=lambda: tf.train.AdamOptimizer(1e-3))")
        try:
            ray_runtime.require().cloudpickle.dumps(optimizer)
        except Exception as exc:  # noqa: BLE001 - any pickling failure means the same
            raise TypeError(f"optimizer {opt!r} cannot be sent to the ps tasks ({exc}); pass "
                            f"a function that builds it instead, e.g. "
                            f"optimizer=lambda: tf.train.AdamOptimizer(1e-3)") from None
    if not isinstance(opt, SyncReplicasOptimizer):
        return None
    aggregate, total = opt.replicas_to_aggregate, opt.total_num_replicas
    if total != num_workers:
        raise ValueError(f"SyncReplicasOptimizer(total_num_replicas={total}) must equal "
                         f"num_workers={num_workers}: the workers started, backups included")
    if aggregate > num_workers:
        raise ValueError(f"SyncReplicasOptimizer(replicas_to_aggregate={aggregate}) is more "
                         f"than the {num_workers} workers; each step averages gradients of "
                         f"replicas_to_aggregate different workers, so expected "
                         f"replicas_to_aggregate <= total_num_replicas = num_workers")
    return aggregate


class ParameterServerTraining:
    """Trains `model_fn`'s model with ps and worker tasks on Ray (module docstring).

    model_fn: () -> the loss tensor, or {"loss": tensor, "accuracy": tensor, ...}; it
      builds the model in the default graph (or in a graph of its own).
    optimizer: a tf.train.Optimizer (not yet used) or a function returning one, called
      on each ps task; a SyncReplicasOptimizer makes training synchronous. Or an object
      with `build_shard_apply(layout, specs)` that builds a ps task's update graph
      itself (ps_task.py; an Estimator's model_fn does, estimator/ps_model_fn.py).
    input_fn: (worker_index, num_workers) -> iterable of feed dicts keyed by tensor or
      placeholder names; None when the model reads its own input.
    num_workers, num_ps: worker and ps tasks (actors).
    checkpoint_dir: where checkpoints go (shared by the driver and the ps tasks); None
      for none, then a ps restart returns to the initial values.
    save_checkpoint_steps, max_to_keep: a checkpoint every that many global steps, and
      how many are kept.
    ps_strategy: replica_device_setter's ps_strategy (default: round-robin).
    address: a Ray cluster to join (see ray_runtime.py); default: this process's Ray,
      or a new local instance.
    worker_options, ps_options: Ray actor options for each task (default
      {"num_cpus": 1, "scheduling_strategy": "SPREAD"}; add num_gpus, memory,
      resources, runtime_env...).
    max_restarts: actor restarts allowed per `train` call.
    """

    def __init__(self, model_fn, optimizer, input_fn=None, num_workers=1, num_ps=1,
                 checkpoint_dir=None, save_checkpoint_steps=100, max_to_keep=5,
                 ps_strategy=None, address=None, worker_options=None, ps_options=None,
                 max_restarts=10, actor_start_timeout_s=300.0, poll_interval_s=0.05):
        self.num_workers = _count("num_workers", num_workers, 1)
        self.num_ps = _count("num_ps", num_ps, 1)
        if save_checkpoint_steps is not None:
            _count("save_checkpoint_steps", save_checkpoint_steps, 1)
        _count("max_restarts", max_restarts, 0)
        if not callable(model_fn):
            raise TypeError(f"model_fn must be a function building the model and returning "
                            f"its loss; received model_fn={model_fn!r}")
        if input_fn is not None and not callable(input_fn):
            raise TypeError(f"input_fn must be a function (worker_index, num_workers) -> "
                            f"iterable of feed dicts, or None; received input_fn={input_fn!r}")
        ray_runtime.require()  # fail before any work when Ray is missing
        self.replicas_to_aggregate = _inspect_optimizer(optimizer, self.num_workers)
        self.sync = self.replicas_to_aggregate is not None
        self.model_fn, self.optimizer, self.input_fn = model_fn, optimizer, input_fn
        self.address = address
        self.layout, self._initial_values = model_layout.inspect_model(
            model_fn, self.num_ps, ps_strategy)
        # The ps tasks run elsewhere (another directory, maybe another machine sharing
        # the file system): they get the absolute path.
        self.checkpoint_dir = os.path.abspath(checkpoint_dir) if checkpoint_dir else None
        self.save_checkpoint_steps = save_checkpoint_steps if checkpoint_dir else None
        self.keeper = (checkpoints.CheckpointKeeper(checkpoint_dir, max_to_keep=max_to_keep)
                       if checkpoint_dir else None)
        self.worker_options = dict(DEFAULT_ACTOR_OPTIONS, **(worker_options or {}))
        self.ps_options = dict(DEFAULT_ACTOR_OPTIONS, **(ps_options or {}))
        self.max_restarts = max_restarts
        self.actor_start_timeout_s = actor_start_timeout_s
        self.poll_interval_s = poll_interval_s
        self.run_id = uuid.uuid4().hex[:12]
        self._generation = 0
        self._started_ray = False
        self._ps, self._workers = [], []
        self._input_ref = None
        self._global_step = 0
        self._pending = {}  # step -> {ps task: (entries, save id)} of uncommitted shards
        self._last_checkpoint = self.keeper.latest() if self.keeper else None

    # -- public state ---------------------------------------------------------------------------
    @property
    def placement(self):
        """{variable name: ps task}, as the device setter placed them."""
        return self.layout.placement

    @property
    def ps_tasks(self):
        """The ps actors' handles (index = task); replaced ones after a restart."""
        return list(self._ps)

    @property
    def workers(self):
        return list(self._workers)

    @property
    def global_step(self):
        """The chief ps task's step as of the driver's last poll."""
        return self._global_step

    @property
    def latest_checkpoint(self):
        return self._last_checkpoint

    def variables(self):
        """{name: ndarray}: the model's variables as the ps tasks hold them now."""
        ray = ray_runtime.require()
        merged = {}
        step_name = self.layout.global_step or "global_step"
        for task, values in enumerate(ray.get([ps.values.remote() for ps in self._ps])):
            step = values.pop(step_name)
            merged.update(values)
            if task == self.layout.chief_task and self.layout.global_step:
                merged[step_name] = step
        return merged

    # -- lifecycle -----------------------------------------------------------------------------
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def start(self):
        """Connects to Ray and starts the ps tasks (restored from the latest checkpoint
        when `checkpoint_dir` has one) and the workers. `train` calls it."""
        if self._ps:
            return
        ray = ray_runtime.require()
        self._started_ray = ray_runtime.connect(self.address, self.num_workers + self.num_ps)
        self._input_ref = ray.put(self.input_fn)
        # All actors start at once (each imports tensorflux and builds its graph).
        self._ps = [self._new_ps(task) for task in range(self.num_ps)]
        self._workers = [self._new_worker(i) for i in range(self.num_workers)]
        self._wait_ready(self._ps, "ps", self.ps_options)
        self._reset_ps()
        self._wait_ready(self._workers, "worker", self.worker_options)

    def close(self):
        """Ends the actors (and the local Ray instance if this job started it)."""
        if not ray_runtime.require().is_initialized():
            return
        ray = ray_runtime.require()
        for actor in self._ps + self._workers:
            if actor is not None:
                ray.kill(actor)
        self._ps, self._workers = [], []
        if self._started_ray:
            ray.shutdown()
            self._started_ray = False

    def _new_ps(self, task):
        ray = ray_runtime.require()
        actor = ray.remote(ParameterServerTask).options(**self.ps_options)
        return actor.remote(task, self.layout, self.optimizer, self.replicas_to_aggregate,
                            self.checkpoint_dir, self.keeper.basename if self.keeper else None,
                            self.save_checkpoint_steps, self.run_id)

    def _new_worker(self, index):
        ray = ray_runtime.require()
        actor = ray.remote(WorkerTask).options(**self.worker_options)
        return actor.remote(index, self.num_workers, self.layout, self.model_fn,
                            self._input_ref)

    def _wait_ready(self, actors, kind, options):
        ray = ray_runtime.require()
        refs = [a.ready.remote() for a in actors]
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=self.actor_start_timeout_s)
        if len(ready) < len(refs):
            raise TimeoutError(
                f"{len(refs) - len(ready)} of {len(refs)} {kind} actors did not start within "
                f"actor_start_timeout_s={self.actor_start_timeout_s}; each asks for "
                f"{options} and the Ray cluster has {ray.cluster_resources()} in all "
                f"({ray.available_resources()} free): pass smaller {kind}_options or add "
                f"nodes")
        ray.get(refs)  # raises the constructor's error, if any

    def _reset_ps(self):
        """Every ps task restores the latest checkpoint, or the initial values; returns
        the checkpoint's prefix (None: the initial values)."""
        ray = ray_runtime.require()
        self._generation += 1
        if self.keeper:
            self.keeper.clean()
        latest = self.keeper.latest() if self.keeper else None
        if latest:
            _log.info("ps tasks restore %s", latest)
            calls = [ps.restore.remote(os.path.abspath(latest), self._generation)
                     for ps in self._ps]
        else:
            calls = []
            for task, ps in enumerate(self._ps):
                shard = {s.name: self._initial_values[s.name] for s in self.layout.shard(task)}
                calls.append(ps.load.remote(shard, 0, self._generation))
        versions = ray.get(calls)
        self._global_step = versions[self.layout.chief_task]
        self._pending = {}
        return latest

    # -- training -------------------------------------------------------------------------------
    def train(self, steps=None, max_steps=None, on_progress=None, on_checkpoint=None,
              progress_every_s=1.0, on_step=None):
        """Trains until the global step reaches `max_steps` (or `steps` more than now).

        `on_progress(Progress)` is called about every `progress_every_s`;
        `on_checkpoint(CheckpointInfo)` after each committed checkpoint;
        `on_step(step, metrics)` for each update the chief ps task applied, as the driver
        polls it (for summaries). Returns a TrainingResult.
        """
        if (steps is None) == (max_steps is None):
            raise ValueError(f"pass exactly one of steps and max_steps; received "
                             f"steps={steps!r}, max_steps={max_steps!r}")
        self.start()
        target = (self._global_step + _count("steps", steps, 0) if steps is not None
                  else _count("max_steps", max_steps, 0))
        return _TrainingLoop(self, target, on_progress, on_checkpoint, progress_every_s,
                             on_step).run()


class _TrainingLoop:
    """One `train` call: launches the workers' loops and watches the actors."""

    def __init__(self, job, target, on_progress, on_checkpoint, progress_every_s,
                 on_step=None):
        self.job, self.target = job, target
        self.on_step = on_step
        self.on_progress, self.on_checkpoint = on_progress, on_checkpoint
        self.progress_every_s = progress_every_s
        self.ray = ray_runtime.require()
        self.errors = ray_runtime.actor_errors()
        self.runs = {}  # worker index -> ObjectRef of its `run`
        self.totals = dict.fromkeys(TOTALS, 0)
        self.steps_by_worker = dict.fromkeys(range(job.num_workers), 0)
        self.counters = collections.Counter()
        self.log = collections.deque(maxlen=100_000)
        self.since_checkpoint, self.since_progress = [], []
        self.worker_restarts = self.ps_restarts = 0
        self.restores = []
        self.stopping = self.recovering = False
        self.ps_failed_workers = []  # workers whose loop ended on a ps error

    def run(self):
        job = self.job
        started = time.perf_counter()
        first_step = job._global_step
        self.ray.get([ps.resume.remote(self.target) for ps in job._ps])
        for index in range(job.num_workers):
            self._launch(index)
        progress_at, progress_step = time.perf_counter(), first_step
        while self.runs:
            done, _ = self.ray.wait(list(self.runs.values()), num_returns=1,
                                    timeout=job.poll_interval_s)
            failed_ps = self._poll_ps()
            for ref in done:
                self._finished(ref)
            if self.ps_failed_workers and not failed_ps:
                failed_ps = self._poll_ps()
            if failed_ps:
                self._recover_ps(failed_ps)
            elif not self.stopping:  # a transient error: those workers simply rejoin
                for index in self.ps_failed_workers:
                    self._launch(index)
            self.ps_failed_workers = []
            if not self.stopping and job._global_step >= self.target:
                self._stop_workers()
            now = time.perf_counter()
            if (self.on_progress and now - progress_at >= self.progress_every_s
                    and job._global_step > progress_step):
                rate = (job._global_step - progress_step) / (now - progress_at)
                self.on_progress(Progress(job._global_step, self.target, rate,
                                          mean_metrics(self.since_progress),
                                          self.worker_restarts, self.ps_restarts))
                progress_at, progress_step, self.since_progress = now, job._global_step, []
        self._poll_ps()
        seconds = time.perf_counter() - started
        self._final_checkpoint()
        if job.keeper:
            job.keeper.clean()
        log = list(self.log)
        tail = log[-max(1, len(log) // 10):]
        return TrainingResult(
            global_step=job._global_step, seconds=seconds,
            steps_per_sec=(job._global_step - first_step) / max(seconds, 1e-9),
            metrics=mean_metrics([m for _, m in tail]), metrics_log=log,
            gradients_applied=self.counters["applied"],
            stale_gradients_dropped=self.counters["stale_dropped"],
            worker_steps=self.totals["steps"], steps_by_worker=self.steps_by_worker,
            bytes_pulled=self.totals["bytes_pulled"],
            bytes_pushed=self.totals["bytes_pushed"], worker_restarts=self.worker_restarts,
            ps_restarts=self.ps_restarts, restores=self.restores,
            checkpoint=job._last_checkpoint)

    # -- workers ----------------------------------------------------------------------------------
    def _launch(self, index):
        job = self.job
        self.runs[index] = job._workers[index].run.remote(job._ps, self.target, job.sync)

    def _finished(self, ref):
        index = next(i for i, r in self.runs.items() if r == ref)
        del self.runs[index]
        try:
            result = self.ray.get(ref)
        except self.errors as exc:
            self._restart_worker(index, exc)
            return
        except self.ray.exceptions.RayTaskError as exc:  # an error in the user's code
            cause = ray_runtime.task_error_cause(exc)
            raise RuntimeError(f"worker {index} failed: {type(cause).__name__}: "
                               f"{str(cause).strip()}") from cause
        for key in TOTALS:
            self.totals[key] += result[key]
        self.steps_by_worker[index] += result["steps"]
        if result["status"] == "ps_failed":
            self.ps_failed_workers.append(index)

    def _restart_worker(self, index, exc):
        self._count_restart("worker", index, exc)
        self.worker_restarts += 1
        self.job._workers[index] = self.job._new_worker(index)
        if not (self.stopping or self.recovering):
            self._launch(index)  # queued by Ray until the new actor is built

    def _stop_workers(self):
        self.stopping = True
        for ps in self.job._ps:
            try:
                self.ray.get(ps.request_stop.remote())
            except self.errors:
                pass  # a dead ps: the driver notices it in the next poll

    def _count_restart(self, kind, index, exc):
        restarts = self.worker_restarts + self.ps_restarts
        if restarts >= self.job.max_restarts:
            raise RuntimeError(f"{kind} {index} failed ({exc}) after {restarts} restarts, "
                               f"max_restarts={self.job.max_restarts}") from exc
        _log.warning("%s task %d failed (%s); restarting it", kind, index,
                     str(exc).splitlines()[0] if str(exc) else type(exc).__name__)

    # -- ps tasks -------------------------------------------------------------------------------
    def _poll_ps(self):
        """Reads every ps task's stats: the step, metrics, saved shards. Returns the tasks
        found dead."""
        job = self.job
        refs = [ps.stats.remote() for ps in job._ps]
        failed = []
        for task, ref in enumerate(refs):
            try:
                stats = self.ray.get(ref)
            except self.errors:
                failed.append(task)
                continue
            self._take_stats(task, stats)
        return failed

    def _take_stats(self, task, stats):
        job = self.job
        if stats["generation"] != job._generation:
            return
        for key in ("applied", "stale_dropped"):
            self.counters[key] += stats["counters"][key]
        if task == job.layout.chief_task:
            job._global_step = stats["version"]
            for step, metrics in stats["metrics"]:
                self.log.append((step, metrics))
                self.since_checkpoint.append((step, metrics))
                self.since_progress.append(metrics)
                if self.on_step:
                    self.on_step(step, metrics)
        for generation, step, entries, shard_id, saved_at in stats["saved"]:
            if generation == job._generation:
                job._pending.setdefault(step, {})[task] = (entries, shard_id, saved_at)
        self._commit_ready()

    def _commit_ready(self):
        job = self.job
        for step in sorted(job._pending):
            shards = job._pending[step]
            if len(shards) < job.num_ps:
                continue
            del job._pending[step]
            entries = [shards[t][0] for t in range(job.num_ps)]
            prefix = job.keeper.commit(step, entries, shards[0][1], job.num_ps)
            self._committed(step, prefix, shards[job.layout.chief_task][2])

    def _committed(self, step, prefix, saved_at):
        self.job._last_checkpoint = prefix
        upto = [m for s, m in self.since_checkpoint if s <= step]
        self.since_checkpoint = [(s, m) for s, m in self.since_checkpoint if s > step]
        if self.on_checkpoint:
            self.on_checkpoint(CheckpointInfo(step, prefix, mean_metrics(upto), saved_at))

    def _recover_ps(self, failed):
        """Replaces the dead ps tasks and returns every ps to the latest checkpoint."""
        job = self.job
        for task in failed:
            self._count_restart("ps", task, "actor died")
            self.ps_restarts += 1
        for task, ps in enumerate(job._ps):
            if task not in failed:
                try:
                    self.ray.get(ps.request_stop.remote())
                except self.errors:
                    failed.append(task)
        self.recovering = True
        for ref in list(self.runs.values()):  # the workers end their loops
            self._finished(ref)
        self.recovering = False
        self.ps_failed_workers = []
        for task in sorted(set(failed)):
            job._ps[task] = job._new_ps(task)
        job._wait_ready(job._ps, "ps", job.ps_options)
        seen = job._global_step
        self.restores.append((seen, job._reset_ps()))
        self.ray.get([ps.resume.remote(self.target) for ps in job._ps])
        self.stopping = job._global_step >= self.target  # a restore may go back before it
        if not self.stopping:
            for index in range(job.num_workers):
                self._launch(index)

    def _final_checkpoint(self):
        job = self.job
        if not job.keeper or job._last_checkpoint == job.keeper.prefix(job._global_step):
            return
        step = job._global_step
        entries = self.ray.get([ps.save.remote(step) for ps in job._ps])
        prefix = job.keeper.commit(step, entries,
                                   checkpoints.save_id(job.run_id, job._generation, step),
                                   job.num_ps)
        self._committed(step, prefix, time.time())
