"""The tf.data service's servers: `DispatchServer` and `WorkerServer`.

The dispatcher keeps the registered datasets (id, element spec, cardinality, and the
key naming the dataset's definition), the workers that registered with it, and the jobs:
a job reads one dataset under one sharding policy; consumers naming the same job_name
(and iteration) share it. Each worker serves one task per job: the job's elements,
produced by running the dataset there and sent to consumers over the socket.

**Where datasets run.** tensorflux cannot serialize a dataset's definition (its nodes
hold traced function graphs, generators and Python callables), so a dataset is
registered by a key naming it in the registering process's table of definitions, and a
worker must run in that same process to run it. A worker in another process gets a
FailedPreconditionError saying so. The dispatcher and the data itself travel over TCP
as in TF, so consumers, dispatcher and workers may sit in other threads or Sessions.

**Sharding** (ShardingPolicy): OFF runs the whole dataset on every worker. DYNAMIC
(distributed_epoch) splits the dataset's source: the pipeline's single splittable
source (range, from_tensor_slices) takes element positions from a counter the
dispatcher keeps per job and pass, so each source element goes to exactly one worker.
FILE shards that source statically (position % num_workers), DATA the pipeline's
output, FILE_OR_DATA is FILE where the source is splittable, else DATA, and HINT
replaces `shard(SHARD_HINT, SHARD_HINT)` with (num_workers, worker_index). The worker
index is the worker's place in DispatcherConfig.worker_addresses when given, else its
registration order.
"""

from __future__ import annotations

import collections
import copy
import itertools
import os
import shutil
import threading
import uuid

from tensorflux._src.data import service_wire as wire
from tensorflux._src.data.cache import write_array
from tensorflux._src.data.dataset_ops import Dataset, ElementError
from tensorflux._src.data.snapshot import _open, _write_metadata, decode_spec
from tensorflux._src.data.sources import RangeDataset, TensorSliceDataset
from tensorflux._src.data.transformations import SHARD_HINT, ShardDataset
from tensorflux._src.framework import errors

OFF, DYNAMIC, FILE, DATA, FILE_OR_DATA, HINT = range(6)  # ShardingPolicy's values
DEFAULT_PROTOCOL = "grpc"  # the name TF's servers use; the wire is service_wire's
PROTOCOLS = ("grpc",)
_CACHE_ELEMENTS = 1024  # a cross-trainer cache keeps this many recent elements


def _time_or_placeholder(value):
    # As TF: None means "let the runtime choose" (0); an explicit 0 means "very small" (1).
    if value == 0:
        return 1
    return 0 if value is None else value


class DispatcherConfig(collections.namedtuple("DispatcherConfig", [
        "port", "protocol", "work_dir", "fault_tolerant_mode", "worker_addresses",
        "job_gc_check_interval_ms", "job_gc_timeout_ms", "worker_timeout_ms",
        "worker_max_concurrent_snapshots"])):
    """Configuration of a tf.data service dispatcher (TF's fields and defaults; the
    dispatcher here keeps its state in memory: `work_dir`/`fault_tolerant_mode` are
    checked and stored, no journal is written)."""

    def __new__(cls, port=0, protocol=None, work_dir=None, fault_tolerant_mode=False,
                worker_addresses=None, job_gc_check_interval_ms=None,
                job_gc_timeout_ms=None, worker_timeout_ms=None,
                worker_max_concurrent_snapshots=0):
        return super().__new__(
            cls, port, DEFAULT_PROTOCOL if protocol is None else protocol, work_dir,
            fault_tolerant_mode, worker_addresses,
            _time_or_placeholder(job_gc_check_interval_ms),
            _time_or_placeholder(job_gc_timeout_ms), worker_timeout_ms,
            worker_max_concurrent_snapshots)


class WorkerConfig(collections.namedtuple("WorkerConfig", [
        "dispatcher_address", "worker_address", "port", "protocol",
        "heartbeat_interval_ms", "dispatcher_timeout_ms", "data_transfer_protocol",
        "data_transfer_address"])):
    """Configuration of a tf.data service worker (TF's fields and defaults)."""

    def __new__(cls, dispatcher_address, worker_address=None, port=0, protocol=None,
                heartbeat_interval_ms=None, dispatcher_timeout_ms=None,
                data_transfer_protocol=None, data_transfer_address=None):
        return super().__new__(
            cls, dispatcher_address,
            "localhost:%port%" if worker_address is None else worker_address, port,
            DEFAULT_PROTOCOL if protocol is None else protocol,
            _time_or_placeholder(heartbeat_interval_ms),
            _time_or_placeholder(dispatcher_timeout_ms), data_transfer_protocol,
            "localhost:%dts_port%" if data_transfer_address is None
            else data_transfer_address)


def check_protocol(protocol):
    if protocol not in PROTOCOLS:
        raise errors.NotFoundError(
            None, None, f"No credentials factory has been registered for protocol "
            f"{protocol}. The available types are: [ {', '.join(PROTOCOLS)} ]")


# -- this process's dataset definitions -----------------------------------------------
_DEFINITIONS = {}  # key -> DatasetVariant (the dataset and its input values)
_DEFINITIONS_LOCK = threading.Lock()


def define(key, variant):
    with _DEFINITIONS_LOCK:
        _DEFINITIONS.setdefault(key, variant)


def definition(key, dataset_id):
    with _DEFINITIONS_LOCK:
        found = _DEFINITIONS.get(key)
    if found is None:
        raise errors.FailedPreconditionError(
            None, None, f"This tf.data service worker (process {os.getpid()}) cannot "
            f"obtain the definition of dataset {dataset_id}: tensorflux cannot serialize "
            f"datasets, so a worker runs only datasets registered in its own process "
            f"(start the WorkerServer in the program that calls register_dataset or "
            f"distribute).")
    return found


# -- the dispatcher -------------------------------------------------------------------
class _Job:
    def __init__(self, job_id, request):
        self.job_id = job_id
        self.dataset_id = request["dataset_id"]
        self.policy = request["policy"]
        self.num_consumers = request["num_consumers"]
        self.trainer_cache = request["cross_trainer_cache"]
        self.tasks = None  # [(worker address, worker index)] once workers exist
        self.num_workers = 0
        self.splits = collections.Counter()  # pass -> source positions handed out


class DispatchServer(wire.Server):
    """A tf.data service dispatcher on localhost (`target` is "grpc://localhost:PORT").
    See the module docstring for what it keeps and where datasets run."""

    def __init__(self, config=None, start=True):
        config = config or DispatcherConfig()
        if config.fault_tolerant_mode and not config.work_dir:
            raise ValueError("Cannot enable fault tolerant mode without configuring a work "
                             "dir. Make sure to set `work_dir` in the `config` object passed "
                             "to `DispatcherServer`.")
        check_protocol(config.protocol)
        super().__init__(config.port)
        self._config = config
        self._lock = threading.Lock()
        self._datasets = {}  # id -> registration
        self._by_key = {}  # definition key -> id
        self._ids = itertools.count(1000)
        self._workers = []
        self._jobs = {}
        self._named_jobs = {}  # (job_name, iteration) -> job id
        self._job_ids = itertools.count()
        self._snapshots = {}  # path -> state
        if start:
            self.start()

    @property
    def target(self):
        return f"{self._config.protocol}://localhost:{self.bound_port()}"

    @property
    def _address(self):
        return f"localhost:{self.bound_port()}"

    def _num_workers(self):
        with self._lock:
            return len(self._workers)

    def __del__(self):
        try:
            self.stop()
        except Exception:  # interpreter shutdown
            pass

    # -- requests ------------------------------------------------------------------------
    def _handle(self, header, arrays):
        handler = getattr(self, "_on_" + header["op"], None)
        if handler is None:
            raise errors.UnimplementedError(None, None, f"Unknown request {header['op']!r}")
        with self._lock:
            reply = handler(header)
        if header["op"] == "snapshot":
            self._start_streams(header, reply)
        return reply, ()

    def _start_streams(self, request, job):
        """Asks each worker to write its share of the snapshot (outside the lock: the
        workers call back)."""
        for address, index in job["tasks"]:
            connection = wire.Connection(address, "tf.data service worker")
            try:
                connection.call({
                    "op": "write_stream", "job_id": job["job_id"], "path": request["path"],
                    "tmp": job["tmp"], "compression": request["compression"],
                    "dataset_id": request["dataset_id"], "policy": DYNAMIC,
                    "num_workers": job["num_workers"], "worker_index": index,
                    "num_consumers": None})
            finally:
                connection.close()

    def _on_register_worker(self, request):
        if request["address"] not in self._workers:
            self._workers.append(request["address"])
        return {}

    def _on_unregister_worker(self, request):
        if request["address"] in self._workers:
            self._workers.remove(request["address"])
        return {}

    def _on_register_dataset(self, request):
        requested = request.get("requested_id")
        if requested:
            if requested not in self._datasets:
                self._datasets[requested] = request
            return {"dataset_id": requested}
        found = self._by_key.get(request["key"])
        if found is None:
            found = self._by_key[request["key"]] = str(next(self._ids))
            self._datasets[found] = request
        return {"dataset_id": found}

    def _dataset(self, dataset_id):
        found = self._datasets.get(dataset_id)
        if found is None:
            raise errors.NotFoundError(None, None, f"Dataset id {dataset_id} not found")
        return found

    def _on_get_dataset(self, request):
        return self._dataset(request["dataset_id"])

    def _on_get_or_create_job(self, request):
        dataset = self._dataset(request["dataset_id"])
        if request["cross_trainer_cache"] and dataset["cardinality"] != -1:
            raise errors.InvalidArgumentError(
                None, None, f"Cross-trainer caching requires the input dataset to be "
                f"infinite. Got input with cardinality {dataset['cardinality']}.")
        name = request.get("job_name")
        key = (name, request["iteration"]) if name else None
        job_id = self._named_jobs.get(key) if key else None
        if job_id is not None:
            job = self._jobs[job_id]
            if job.policy != request["policy"]:
                raise errors.FailedPreconditionError(
                    None, None, f"Tried to create job with name {name} using sharding "
                    f"policy {request['policy']}, but there is already an existing job "
                    f"with that name using sharding policy {job.policy}")
            return {"job_id": job_id}
        job_id = next(self._job_ids)
        self._jobs[job_id] = _Job(job_id, request)
        if key:
            self._named_jobs[key] = job_id
        return {"job_id": job_id}

    def _worker_order(self):
        configured = self._config.worker_addresses
        if not configured:
            return list(self._workers)
        return [w for w in configured if w in self._workers] + \
            [w for w in self._workers if w not in configured]

    def _job(self, job_id):
        job = self._jobs.get(job_id)
        if job is None:
            raise errors.NotFoundError(None, None, f"Job id {job_id} not found")
        return job

    def _on_job_tasks(self, request):
        job = self._job(request["job_id"])
        if job.tasks is None and self._workers:
            workers = self._worker_order()
            job.tasks = [(w, i) for i, w in enumerate(workers)]
            job.num_workers = len(workers)
        return {"tasks": job.tasks or [], "num_workers": job.num_workers,
                "dataset_id": job.dataset_id, "policy": job.policy,
                "num_consumers": job.num_consumers, "cross_trainer_cache":
                job.trainer_cache}

    def _on_release_job(self, request):
        self._jobs.pop(request["job_id"], None)
        return {}

    def _on_get_split(self, request):
        job = self._job(request["job_id"])
        split = job.splits[request["pass"]]
        job.splits[request["pass"]] += 1
        return {"split": split}

    # -- distributed_save --------------------------------------------------------------
    def _on_snapshot(self, request):
        path = request["path"]
        if path in self._snapshots or os.path.exists(path):
            raise errors.AlreadyExistsError(
                None, None, f"tf.data snapshot at {path} already exists or has started")
        dataset = self._dataset(request["dataset_id"])
        if not self._workers:
            raise errors.FailedPreconditionError(
                None, None, "distributed_save needs tf.data service workers; none has "
                "registered with the dispatcher")
        job = self._on_get_or_create_job({
            "dataset_id": request["dataset_id"], "policy": DYNAMIC, "job_name": None,
            "iteration": 0, "num_consumers": None, "cross_trainer_cache": None})
        tasks = self._on_job_tasks(job)
        os.makedirs(path)
        tmp = os.path.join(path, f".tmp_{uuid.uuid4().hex}")
        os.makedirs(tmp)
        self._snapshots[path] = {"tmp": tmp, "pending": len(tasks["tasks"]), "count": 0,
                                 "shards": [], "error": None, "dataset": dataset,
                                 "compression": request["compression"],
                                 "job_id": job["job_id"]}
        return {"job_id": job["job_id"], "tmp": tmp, **tasks}

    def _on_stream_done(self, request):
        state = self._snapshots[request["path"]]
        state["pending"] -= 1
        if request.get("error"):
            state["error"] = request["error"]
        else:
            state["count"] += request["count"]
            state["shards"].append(request["shard"])
        if state["pending"] == 0:
            path = request["path"]
            if state["error"]:
                shutil.rmtree(state["tmp"], ignore_errors=True)
            else:
                run = f"run_{uuid.uuid4().hex}"
                os.rename(state["tmp"], os.path.join(path, run))
                _write_metadata(path, run, decode_spec(state["dataset"]["element_spec"]),
                                state["compression"], sorted(state["shards"]),
                                state["count"])
            state["done"] = True
            self._jobs.pop(state["job_id"], None)
        return {}

    def _snapshot_done(self, path):
        with self._lock:
            state = self._snapshots.get(path)
            return None if state is None or not state.get("done") else \
                (state["error"] or True)


# -- splitting and sharding a pipeline on a worker -----------------------------------
_SPLITTABLE = (RangeDataset, TensorSliceDataset)


def _source_chain(dataset):
    """The nodes from `dataset` down to its splittable source (UnimplementedError as
    TF's when the pipeline has none, or branches)."""
    chain, node = [], dataset
    while True:
        chain.append(node)
        if isinstance(node, _SPLITTABLE):
            return chain
        name = type(node).__name__
        if not node._children:
            raise errors.UnimplementedError(
                None, None, f"Cannot create split providers for dataset of type {name}, "
                f"because the dataset implements neither `InputDatasets` nor "
                f"`MakeSplitProvider`.")
        if len(node._children) != 1:
            raise errors.UnimplementedError(
                None, None, f"Cannot create split providers for dataset of type {name}, "
                f"because the dataset is not unary (instead having arity "
                f"{len(node._children)}), and no custom implementation of "
                f"`MakeSplitProvider` is defined.")
        node = node._children[0]


def _replace_chain(chain, new_source):
    node = new_source
    for parent in reversed(chain[:-1]):
        clone = copy.copy(parent)
        clone._children = (node,)
        node = clone
    return node


def _rewrite(node, replace):
    """A copy of the tree under `node` with `replace(n)` (when not None) for n."""
    new = replace(node)
    if new is not None:
        return new
    children = tuple(_rewrite(c, replace) for c in node._children)
    if all(a is b for a, b in zip(children, node._children)):
        return node
    clone = copy.copy(node)
    clone._children = children
    return clone


class _PickedSource(Dataset):
    """The elements of `source` at the positions `positions(pass)` yields (increasing)."""

    def __init__(self, source, positions):
        self._children = (source,)
        self._structure = source._structure
        self._positions = positions

    def _iterate(self, ctx):
        memory = ctx.memory(self)
        pass_index = memory["passes"] = memory.get("passes", -1) + 1
        elements = self._children[0]._iterate(ctx)
        try:
            position = 0
            for wanted in self._positions(pass_index):
                element = None
                while position <= wanted:
                    element = next(elements, None)
                    position += 1
                    if element is None:
                        return
                yield element
        finally:
            elements.close()


class _DataShard(Dataset):
    def __init__(self, dataset, num_shards, index):
        self._children = (dataset,)
        self._structure = dataset._structure
        self._num_shards, self._index = num_shards, index

    def _iterate(self, ctx):
        for position, element in enumerate(self._children[0]._iterate(ctx)):
            if position % self._num_shards == self._index:
                yield element


def sharded_pipeline(dataset, task, dispatcher):
    """The pipeline a worker runs for one task (see the module docstring)."""
    policy, n, index = task["policy"], task["num_workers"], task["worker_index"]
    if policy == OFF:
        return dataset
    if policy == HINT:
        def hint(node):
            if isinstance(node, ShardDataset) and \
                    (node._num_shards, node._index) == (SHARD_HINT, SHARD_HINT):
                clone = copy.copy(node)
                clone._num_shards, clone._index = n, index
                clone._tensor_args = (n, index)
                clone._children = (_rewrite(node._children[0], hint),)
                return clone
            return None
        return _rewrite(dataset, hint)
    if policy == DATA:
        return _DataShard(dataset, n, index)
    if policy == FILE_OR_DATA:
        try:
            _source_chain(dataset)
        except errors.UnimplementedError:
            return _DataShard(dataset, n, index)
        policy = FILE
    chain = _source_chain(dataset)
    if policy == FILE:
        def positions(_):
            return itertools.count(index, n)
    else:  # DYNAMIC: positions from the dispatcher's counter for this job and pass
        def positions(pass_index):
            while True:
                reply, _ = dispatcher.call({"op": "get_split", "job_id": task["job_id"],
                                            "pass": pass_index})
                yield reply["split"]
    return _replace_chain(chain, _PickedSource(chain[-1], positions))


# -- the worker ----------------------------------------------------------------------
class _Task:
    """One job's elements on this worker; consumers take them first come first served,
    in rounds (num_consumers), or each trainer its own way through a shared cache."""

    def __init__(self, variant, pipeline, task):
        self._ctx = variant.context()
        self._structure = pipeline._structure
        self._elements = pipeline._iterate(self._ctx)
        self._lock = threading.Lock()
        self._num_consumers = task["num_consumers"]
        self._rounds = {}  # round -> [elements, consumers served]
        self._next_round = 0
        self._cache = collections.deque()  # (position, element) of a trainer cache
        self._trainers = {}
        self.finished = False

    def _produce(self):
        element = next(self._elements, None) if not self.finished else None
        if element is None:
            self.finished = True
        return element

    def next_element(self, request):
        with self._lock:
            if request.get("trainer_id"):
                return self._cached(request["trainer_id"])
            if self._num_consumers:
                return self._round(request["round"], request["consumer_index"])
            return self._produce()

    def _round(self, round_index, consumer):
        while self._next_round <= round_index:
            elements = [self._produce() for _ in range(self._num_consumers)]
            self._rounds[self._next_round] = [elements, 0]
            self._next_round += 1
        entry = self._rounds.get(round_index)
        if entry is None:
            return None
        entry[1] += 1
        if entry[1] == self._num_consumers:
            del self._rounds[round_index]
        return entry[0][consumer]

    def _cached(self, trainer):
        position = self._trainers.get(trainer, 0)
        first = self._cache[0][0] if self._cache else 0
        position = max(position, first)  # a slow trainer skips what the cache dropped
        while not self._cache or self._cache[-1][0] < position:
            element = self._produce()
            if element is None:
                raise errors.InvalidArgumentError(
                    None, None, "Cross-trainer caching requires the input dataset to be "
                    "infinite. However, it reached the end of sequence.")
            self._cache.append((self._cache[-1][0] + 1 if self._cache else 0, element))
            if len(self._cache) > _CACHE_ELEMENTS:
                self._cache.popleft()
        self._trainers[trainer] = position + 1
        return self._cache[position - self._cache[0][0]][1]

    def encode(self, element):
        if element is None:
            return {"end": True}, ()
        if type(element) is ElementError:
            return {"element_error": wire.error_header(element.error)}, ()
        return {}, self._structure.to_arrays(element)

    def close(self):
        with self._lock:
            self._elements.close()
            self._ctx.close()


class WorkerServer(wire.Server):
    """A tf.data service worker on localhost, registered with its dispatcher. It runs
    datasets registered in this process (see the module docstring)."""

    def __init__(self, config, start=True):
        if config.dispatcher_address is None:
            raise ValueError("Must specify a `dispatcher_address` in the `config` passed to "
                             "`WorkerServer`.")
        check_protocol(config.protocol)
        super().__init__(config.port)
        self._config = config
        self._lock = threading.Lock()
        self._tasks = {}
        self._streams = []
        self._dispatcher = None
        if start:
            self.start()

    def start(self):
        if self._tcp is not None:
            return
        super().start()
        try:
            self._dispatcher = wire.Connection(self._config.dispatcher_address,
                                               "tf.data service dispatcher")
            self._dispatcher.call({"op": "register_worker", "address": self._address})
        except errors.OpError:
            super().stop()
            raise

    @property
    def _address(self):
        return f"localhost:{self.bound_port()}"

    def _num_tasks(self):
        with self._lock:
            return len(self._tasks)

    def stop(self):
        if self._tcp is None:
            return
        address = self._address
        super().stop()
        for thread in self._streams:
            thread.join()
        try:
            self._dispatcher.call({"op": "unregister_worker", "address": address})
        except errors.OpError:
            pass  # the dispatcher may be gone already
        self._dispatcher.close()
        with self._lock:
            tasks, self._tasks = list(self._tasks.values()), {}
        for task in tasks:
            task.close()

    def __del__(self):
        try:
            self.stop()
        except Exception:  # interpreter shutdown
            pass

    def _task(self, request):
        with self._lock:
            task = self._tasks.get(request["job_id"])
            if task is None:
                info, _ = self._dispatcher.call({"op": "get_dataset",
                                                 "dataset_id": request["dataset_id"]})
                variant = definition(info["key"], request["dataset_id"])
                pipeline = sharded_pipeline(variant.dataset, request, self._dispatcher)
                task = self._tasks[request["job_id"]] = _Task(variant, pipeline, request)
            return task

    def _handle(self, header, arrays):
        if header["op"] == "get_element":
            task = self._task(header)
            return task.encode(task.next_element(header))
        if header["op"] == "drop_task":
            with self._lock:
                task = self._tasks.pop(header["job_id"], None)
            if task is not None:
                task.close()
            return {}, ()
        if header["op"] == "write_stream":
            thread = threading.Thread(target=self._write_stream, args=(header,),
                                      name="tf.data-service-stream", daemon=True)
            self._streams.append(thread)
            thread.start()
            return {}, ()
        raise errors.UnimplementedError(None, None, f"Unknown request {header['op']!r}")

    def _write_stream(self, request):
        """distributed_save: this worker's share of the dataset, as one shard file."""
        done = {"op": "stream_done", "path": request["path"], "shard":
                request["worker_index"], "count": 0}
        try:
            task = self._task(request)
            file = os.path.join(request["tmp"], f"shard_{request['worker_index']:08d}.npyrec")
            with _open(file, "wb", request["compression"]) as f:
                while True:
                    element = task.next_element(request)
                    if element is None:
                        break
                    if type(element) is ElementError:
                        raise element.error
                    for array in task._structure.to_arrays(element):
                        write_array(f, array)
                    done["count"] += 1
        except Exception as exc:  # reported to the dispatcher, which drops the snapshot
            done["error"] = wire.error_header(exc)["message"]
        with self._lock:
            task = self._tasks.pop(request["job_id"], None)
        if task is not None:
            task.close()
        connection = wire.Connection(self._config.dispatcher_address,
                                     "tf.data service dispatcher")
        try:
            connection.call(done)
        finally:
            connection.close()
