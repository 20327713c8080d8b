"""`tf.data.experimental.service`: register_dataset, from_dataset_id, distribute, and
`tf.data.experimental.distributed_save`, over the servers of service_servers.py.

`register_dataset` is a host op (TF's RegisterDatasetV2) taking the dataset's graph
tensors: when run it records the dataset and their values in this process's table of
definitions and registers it with the dispatcher, returning the dataset id (a scalar
string, as TF 2's). A dataset from `from_dataset_id` is a node whose pass asks the
dispatcher for its job (shared by consumers naming the same job_name, per iteration
as TF's iteration counter counts them) and reads the job's elements from the workers
over TCP: as they deliver them, with max_outstanding_requests requests in flight (one
thread per worker), in turn when that is 1 or with a cross-trainer cache, and in TF's
strict rounds with num_consumers.
`distribute` is both, as in TF. Workers must run in the registering process (see
service_servers).
"""

from __future__ import annotations

import enum
import itertools
import os
import queue
import threading
import time

import numpy as np

from tensorflux._src.data import service_servers as servers
from tensorflux._src.data import service_wire as wire
from tensorflux._src.data import structure as _structure
from tensorflux._src.data.consumers import _text, fingerprint_of
from tensorflux._src.data.dataset_ops import (
    AUTOTUNE, INPUT_TYPES, UNKNOWN, Dataset, ElementError,
)
from tensorflux._src.data.iterator_ops import _DATASETS
from tensorflux._src.data.iterator_ops import _register_dataset as _dataset_token
from tensorflux._src.data.options import AutoShardPolicy, Options
from tensorflux._src.data.snapshot import _compression, decode_spec, encode_spec
from tensorflux._src.data.variant_ops import DatasetVariant
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors, tensor_shape
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import REQUIRED, OpDef, register

COMPRESSION_AUTO = "AUTO"
COMPRESSION_NONE = None
COMPRESSION_SNAPPY = "SNAPPY"
_PARALLEL_EPOCHS = "parallel_epochs"
_DISTRIBUTED_EPOCH = "distributed_epoch"
_WAIT_FOR_WORKERS_S = 30.0  # TF waits for workers indefinitely


class ShardingPolicy(enum.IntEnum):
    """How the tf.data service shards a dataset among its workers: OFF (every worker
    produces the whole dataset), DYNAMIC (the source is split among workers as they
    ask: each element once), FILE, DATA, FILE_OR_DATA, HINT (static sharding)."""

    OFF = 0
    DYNAMIC = 1
    FILE = 2
    DATA = 3
    FILE_OR_DATA = 4
    HINT = 5


class CrossTrainerCache:
    """Shares a job's elements among trainers: each `trainer_id` reads the whole
    sequence, produced once and cached on the worker."""

    def __init__(self, trainer_id):
        if not trainer_id:
            raise ValueError("tf.data service cross-trainer cache requires a non-empty "
                             "trainer ID.")
        self.trainer_id = trainer_id


def _get_validated_sharding_policy(processing_mode):
    if isinstance(processing_mode, ShardingPolicy):
        return processing_mode
    if processing_mode == _PARALLEL_EPOCHS:
        return ShardingPolicy.OFF
    if processing_mode == _DISTRIBUTED_EPOCH:
        return ShardingPolicy.DYNAMIC
    raise ValueError("tf.data service processing mode should be a "
                     "`tf.data.experimental.service.ShardingPolicy`, "
                     "`\"parallel_epochs\"`, or `\"distributed_epoch\"`. Got "
                     f"{processing_mode!r}.")


def _validate_job_name(job_name):
    if job_name is None:
        return
    if not isinstance(job_name, str):
        raise ValueError("`job_name` must be a string, but `job_name` was of type "
                         f"{type(job_name)}. job_name={job_name}")
    if not job_name:
        raise ValueError("`job_name` must not be empty")


def _validate_compression(compression):
    valid = [COMPRESSION_AUTO, COMPRESSION_NONE, COMPRESSION_SNAPPY]
    if compression not in valid:
        raise ValueError(f"Invalid `compression` argument: {compression}. "
                         f"Must be one of {valid}.")


def _parse_service(service):
    """(protocol, address) from "[protocol://]address" or a (protocol, address) tuple."""
    if isinstance(service, tuple):
        return service
    if not isinstance(service, str):
        raise ValueError("`service` must be a string, but `service` was of type "
                         f"{type(service)}. service={service}")
    if not service:
        raise ValueError("`service` must not be empty")
    parts = service.split("://")
    if len(parts) == 2:
        return parts[0], parts[1]
    if len(parts) == 1:
        return servers.DEFAULT_PROTOCOL, parts[0]
    raise ValueError(f"Malformed `service` string has multiple '://': {service}.")


def _quietly(call, request):
    try:
        call(request)
    except errors.OpError:
        pass  # the server is gone: nothing is left to release


def _dispatcher(address):
    return wire.Connection(address, "tf.data service dispatcher")


# -- register_dataset -------------------------------------------------------------------
def _register_with(node, inputs, address, protocol, requested_id):
    """Records the dataset in this process and registers it; its id (a str)."""
    servers.check_protocol(protocol)
    variant = DatasetVariant(node, inputs)
    ctx = variant.context()
    try:
        fingerprint = fingerprint_of(node, ctx)
        cardinality = int(node._cardinality(ctx))
    finally:
        ctx.close()
    key = f"{os.getpid()}/{id(node)}/{fingerprint:016x}"
    servers.define(key, variant)
    connection = _dispatcher(address)
    try:
        reply, _ = connection.call({
            "op": "register_dataset", "key": key, "fingerprint": f"{fingerprint:016x}",
            "element_spec": encode_spec(node._structure.element_spec),
            "cardinality": cardinality, "requested_id": requested_id})
    finally:
        connection.close()
    return reply["dataset_id"]


def _register_kernel(*inputs, dataset, address, protocol, requested_dataset_id):
    return np.array(_register_with(_DATASETS[dataset], inputs, address, protocol,
                                   requested_dataset_id).encode(), dtype=object)


register(OpDef("RegisterDatasetV2", inputs=("inputs: list(Tin)",),
               outputs=("dataset_id: string",),
               attrs={"Tin": INPUT_TYPES, "dataset": REQUIRED, "address": REQUIRED,
                      "protocol": REQUIRED, "requested_dataset_id": ""},
               shape=lambda op: tensor_shape.TensorShape([]), host=_register_kernel, stateful=True, not_differentiable=True))


def _register_dataset(service, dataset, compression, dataset_id=None):
    _validate_compression(compression)
    protocol, address = _parse_service(service)
    if not isinstance(dataset, Dataset):
        raise TypeError(f"`dataset` must be a `tf.data.Dataset`, got "
                        f"{type(dataset).__name__}")
    encode_spec(dataset._structure.element_spec)  # unsupported components fail here
    return apply_op("RegisterDatasetV2", name="RegisterDatasetV2",
                    inputs=dataset._inputs(), dataset=_dataset_token(dataset),
                    address=address, protocol=protocol,
                    requested_dataset_id="" if dataset_id is None else str(dataset_id))


def register_dataset(service, dataset, compression="AUTO", dataset_id=None):
    """Registers `dataset` with the tf.data service at `service`; a scalar string tensor,
    the dataset id (an already registered dataset keeps its id). Elements are not
    compressed here whatever `compression` says (it is validated as TF does)."""
    return _register_dataset(service, dataset, compression, dataset_id)


# -- reading from the service -----------------------------------------------------------
class DataServiceDataset(Dataset):
    """The elements a tf.data service job produces for this consumer."""

    def __init__(self, dataset_id, processing_mode, address, element_spec, protocol,
                 job_name=None, consumer_index=None, num_consumers=None,
                 max_outstanding_requests=None, cross_trainer_cache=None,
                 target_workers="AUTO", prefix_job_name=False):
        if (consumer_index is None) != (num_consumers is None):
            raise ValueError(f"Must either set both `consumer_index` and `num_consumers`, "
                             f"or neither. consumer_index={consumer_index}, "
                             f"num_consumers={num_consumers}")
        if num_consumers is not None and job_name is None:
            raise ValueError(f"`job_name` must be set when setting `num_consumers`. "
                             f"num_consumers was set to {num_consumers}.")
        self._policy = _get_validated_sharding_policy(processing_mode)
        self._dataset_id = dataset_id
        self._address, self._protocol = address, protocol
        self._job_name, self._prefix = job_name, prefix_job_name
        self._consumer_index, self._num_consumers = consumer_index, num_consumers
        self._max_outstanding = AUTOTUNE if max_outstanding_requests is None \
            else max_outstanding_requests
        self._trainer = cross_trainer_cache.trainer_id if cross_trainer_cache else None
        self._target_workers = str(target_workers).upper()
        self._tensor_args = (dataset_id, job_name, consumer_index, num_consumers,
                             self._max_outstanding)
        self._spec = element_spec
        self._structure = _structure.Structure.from_element_spec(element_spec)
        self._iterations = itertools.count()  # TF's iteration counter
        self._iterations_lock = threading.Lock()

    def _arguments(self, ctx):
        dataset_id = ctx.value(self._dataset_id)
        dataset_id = str(int(dataset_id)) if np.issubdtype(np.asarray(dataset_id).dtype,
                                                           np.integer) else _text(dataset_id)
        job_name = None if self._job_name is None else _text(ctx.value(self._job_name))
        if job_name and self._prefix:
            job_name = f"dataset_id={dataset_id}/{job_name}"
        consumers = None if self._num_consumers is None else \
            ctx.int_arg(self._num_consumers, "num_consumers", 1)
        index = None if consumers is None else \
            ctx.int_arg(self._consumer_index, "consumer_index", 0)
        if index is not None and index >= consumers:
            raise errors.InvalidArgumentError(
                None, None, f"consumer_index must be less than num_consumers; got "
                f"consumer_index={index}, num_consumers={consumers}")
        outstanding = ctx.int_arg(self._max_outstanding, "max_outstanding_requests")
        if outstanding != AUTOTUNE and outstanding <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"max_outstanding_requests must be positive or "
                f"{AUTOTUNE} (AUTOTUNE), got {outstanding}")
        if self._target_workers not in ("AUTO", "ANY", "LOCAL"):
            raise errors.InvalidArgumentError(
                None, None, f"Unrecognized target workers: {self._target_workers}. "
                f"Expected one of AUTO, ANY, LOCAL.")
        return dataset_id, job_name, consumers, index, outstanding

    def _iterate(self, ctx):
        dataset_id, job_name, consumers, consumer_index, outstanding = self._arguments(ctx)
        with self._iterations_lock:
            iteration = next(self._iterations)
        if self._trainer is not None:
            if not job_name:
                raise errors.InvalidArgumentError(
                    None, None, "Cross-trainer caching requires named jobs. Got empty "
                    "`job_name`.")
            if iteration:
                raise errors.InvalidArgumentError(
                    None, None, "Cross-trainer caching requires infinite datasets and "
                    "disallows multiple repetitions of the same dataset.")
        servers.check_protocol(self._protocol)
        connections, job = {}, None
        dispatcher = _dispatcher(self._address)
        try:
            info, _ = dispatcher.call({"op": "get_dataset", "dataset_id": dataset_id})
            registered = decode_spec(info["element_spec"])
            if not _structure.specs_compatible(registered, self._spec):
                raise errors.InvalidArgumentError(
                    None, None, f"The dataset {dataset_id} registered with the tf.data "
                    f"service has element_spec {registered}, incompatible with the given "
                    f"element_spec {self._spec}")
            job, _ = dispatcher.call({
                "op": "get_or_create_job", "dataset_id": dataset_id,
                "policy": int(self._policy), "job_name": job_name, "iteration": iteration,
                "num_consumers": consumers, "cross_trainer_cache": self._trainer})
            tasks = self._tasks(dispatcher, job["job_id"])
            request = {"op": "get_element", "job_id": job["job_id"],
                       "dataset_id": dataset_id, "policy": tasks["policy"],
                       "num_workers": tasks["num_workers"], "num_consumers": consumers,
                       "consumer_index": consumer_index, "trainer_id": self._trainer}

            def fetch(task, **extra):
                address, worker_index = task
                connection = connections.get(address)
                if connection is None:
                    connection = connections[address] = wire.Connection(
                        address, "tf.data service worker")
                reply, arrays = connection.call({**request, **extra,
                                                 "worker_index": worker_index})
                if reply.get("end"):
                    return None
                if "element_error" in reply:
                    header = reply["element_error"]
                    cls = getattr(errors, header["error"], errors.InternalError)
                    return ElementError(cls(None, None, header["message"]))
                return self._structure.from_arrays(arrays)

            tasks = [tuple(t) for t in tasks["tasks"]]
            if consumers:
                yield from self._read_rounds(tasks, fetch)
            elif self._trainer is not None or outstanding == 1 or len(tasks) == 1:
                yield from self._read_in_turn(tasks, fetch)
            else:
                limit = 2 * len(tasks) if outstanding == AUTOTUNE else outstanding
                yield from self._read_concurrently(tasks, fetch, limit)
        finally:
            # An anonymous job has this one consumer: its tasks go when it is done (a
            # named job stays, as another consumer may still join it).
            released = job_name is None and job is not None
            for connection in connections.values():
                if released:
                    _quietly(connection.call, {"op": "drop_task", "job_id": job["job_id"]})
                connection.close()
            if released:
                _quietly(dispatcher.call, {"op": "release_job", "job_id": job["job_id"]})
            dispatcher.close()

    @staticmethod
    def _tasks(dispatcher, job_id):
        deadline = time.monotonic() + _WAIT_FOR_WORKERS_S
        while True:
            tasks, _ = dispatcher.call({"op": "job_tasks", "job_id": job_id})
            if tasks["tasks"]:
                return tasks
            if time.monotonic() > deadline:
                raise errors.UnavailableError(
                    None, None, f"No tf.data service worker registered with the dispatcher "
                    f"at {dispatcher.address} within {_WAIT_FOR_WORKERS_S:.0f} s")
            time.sleep(0.02)

    @staticmethod
    def _read_rounds(tasks, fetch):
        """TF's coordinated reads: round r comes from worker r % T."""
        for round_index in itertools.count():
            element = fetch(tasks[round_index % len(tasks)],
                            round=round_index // len(tasks))
            if element is None:
                return
            yield element

    @staticmethod
    def _read_concurrently(tasks, fetch, limit):
        """Elements as the workers deliver them, with up to `limit` requested or waiting
        here (max_outstanding_requests): one thread per worker, so the workers compute
        in parallel."""
        arrived = queue.Queue()
        room = threading.Semaphore(limit)
        stop = threading.Event()

        def pull(task):
            try:
                while not stop.is_set():
                    if not room.acquire(timeout=0.05):
                        continue
                    element = fetch(task)
                    arrived.put((task, element))
                    if element is None:
                        return
            except Exception as exc:  # raised by the consumer, in its thread
                arrived.put((task, exc))

        threads = [threading.Thread(target=pull, args=(task,), daemon=True,
                                    name="tf.data-service-consumer") for task in tasks]
        for thread in threads:
            thread.start()
        try:
            live = len(tasks)
            while live:
                _, element = arrived.get()
                room.release()
                if element is None:
                    live -= 1
                elif isinstance(element, BaseException):
                    raise element
                else:
                    yield element
        finally:
            stop.set()
            for thread in threads:
                thread.join()

    @staticmethod
    def _read_in_turn(tasks, fetch):
        active, turn = list(tasks), 0
        while active:
            task = active[turn % len(active)]
            element = fetch(task)
            if element is None:
                active.remove(task)
                continue
            turn += 1
            yield element

    def _cardinality(self, ctx):
        return UNKNOWN


def _from_dataset_id(processing_mode, service, dataset_id, element_spec, job_name=None,
                     consumer_index=None, num_consumers=None, max_outstanding_requests=None,
                     cross_trainer_cache=None, target_workers="AUTO", prefix_job_name=False):
    processing_mode = _get_validated_sharding_policy(processing_mode)
    protocol, address = _parse_service(service)
    if job_name is not None and not isinstance(job_name, (str, Tensor)):
        raise ValueError("`job_name` must be a string or Tensor, but `job_name` was of "
                         f"type {type(job_name)}. job_name={job_name}.")
    if not element_spec:
        raise ValueError("In graph mode `element_spec` must be provided manually.")
    if not isinstance(dataset_id, Tensor):
        dataset_id = convert_to_tensor(
            dataset_id.decode() if isinstance(dataset_id, bytes) else dataset_id,
            _dtypes.string if isinstance(dataset_id, (str, bytes)) else _dtypes.int64,
            name="dataset_id")
    dataset = DataServiceDataset(dataset_id, processing_mode, address, element_spec,
                                 protocol, job_name, consumer_index, num_consumers,
                                 max_outstanding_requests, cross_trainer_cache,
                                 target_workers, prefix_job_name)
    if job_name is not None:  # as TF: a shared job is not auto-sharded again
        options = Options()
        options.experimental_distribute.auto_shard_policy = AutoShardPolicy.OFF
        dataset = dataset.with_options(options)
    return dataset


def from_dataset_id(processing_mode, service, dataset_id, element_spec=None, job_name=None,
                    consumer_index=None, num_consumers=None, max_outstanding_requests=None,
                    data_transfer_protocol=None, cross_trainer_cache=None,
                    target_workers="AUTO"):
    """A dataset reading the registered dataset `dataset_id` from the tf.data service
    (`element_spec` is required: graph mode). Up to `max_outstanding_requests` elements
    are requested or buffered at once (AUTOTUNE: two per worker); `data_transfer_protocol`
    is accepted and not used (one wire format)."""
    _validate_job_name(job_name)
    return _from_dataset_id(processing_mode, service, dataset_id, element_spec, job_name,
                            consumer_index, num_consumers, max_outstanding_requests,
                            cross_trainer_cache, target_workers, prefix_job_name=True)


def distribute(processing_mode, service, job_name=None, consumer_index=None,
               num_consumers=None, max_outstanding_requests=None,
               data_transfer_protocol=None, compression="AUTO", cross_trainer_cache=None,
               target_workers="AUTO"):
    """A transformation running the dataset on the tf.data service: `register_dataset`
    then `from_dataset_id` (registration happens when the iterator is initialized)."""
    _validate_job_name(job_name)
    processing_mode = _get_validated_sharding_policy(processing_mode)
    _validate_compression(compression)

    def apply(dataset):
        dataset_id = _register_dataset(service, dataset, compression)
        return _from_dataset_id(processing_mode, service, dataset_id,
                                dataset._structure.element_spec, job_name, consumer_index,
                                num_consumers, max_outstanding_requests,
                                cross_trainer_cache, target_workers)
    return apply


# -- distributed_save -------------------------------------------------------------------
def _distributed_save_kernel(*inputs, dataset, directory, address, compression):
    node = _DATASETS[dataset]
    protocol, address = _parse_service(address)
    dataset_id = _register_with(node, inputs, address, protocol, None)
    connection = _dispatcher(address)
    try:
        connection.call({"op": "snapshot", "path": os.fspath(directory),
                         "dataset_id": dataset_id,
                         "compression": _compression(compression)})
    finally:
        connection.close()
    return ()


register(OpDef("DistributedSave", inputs=("inputs: list(Tin)",), outputs=(),
               attrs={"Tin": INPUT_TYPES, "dataset": REQUIRED, "directory": REQUIRED,
                      "address": REQUIRED, "compression": ""},
               host=_distributed_save_kernel, stateful=True, not_differentiable=True))


def distributed_save(dataset, path, data_service_address, compression="AUTO"):
    """An op that starts writing `dataset` under `path` through the tf.data service
    (each worker writes its dynamic share as one shard) and returns at once; the result
    is in `Dataset.save`'s format, for `Dataset.load(path, wait=True)`."""
    if not isinstance(data_service_address, str):
        raise ValueError("`data_service_address` must be a string, but is a "
                         f"{type(data_service_address)} ({data_service_address}")
    if not data_service_address:
        raise ValueError("`data_service_address` must not be empty")
    if compression not in (None, "AUTO", "GZIP", "SNAPPY", "NONE", ""):
        raise ValueError(f"Invalid `compression` argument: {compression}.")
    encode_spec(dataset._structure.element_spec)
    return apply_op("DistributedSave", name="DistributedSave", inputs=dataset._inputs(),
                    dataset=_dataset_token(dataset), directory=os.fspath(path),
                    address=data_service_address, compression=compression or "")
