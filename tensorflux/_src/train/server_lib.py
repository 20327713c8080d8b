"""`tf.train.ClusterSpec` and `tf.train.Server`: TF1's description of a cluster.

A ClusterSpec names the processes of a training job: jobs ("ps", "worker", "chief",
...) mapped to the network addresses of their tasks, densely (a list) or sparsely
({task index: address}). A Server is one task of that cluster.

tensorflux runs no gRPC runtime of its own (DESIGN.md: no home-made cluster manager;
parameter servers are Ray actors, multi-host SPMD is `jax.distributed`). A Server here
reserves its task's port (so two tasks cannot claim one address, as with TF), answers
TF's `target` ("grpc://host:port"), and `join()` blocks until `stop()`. A Session given
that target runs in this process, placing ops of every job locally.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field

from tensorflux._src.framework import errors


@dataclass
class JobDef:
    """One job of a `ClusterDef`: its name and {task index: address}."""
    name: str
    tasks: dict = field(default_factory=dict)


@dataclass
class ClusterDef:
    """TF's ClusterDef message: the jobs, sorted by name (as TF writes them)."""
    job: list = field(default_factory=list)


@dataclass
class ServerDef:
    """TF's ServerDef message: the cluster, this task, the protocol, session defaults."""
    cluster: ClusterDef = field(default_factory=ClusterDef)
    job_name: str = ""
    task_index: int = 0
    protocol: str = "grpc"
    default_session_config: object = None


class ClusterSpec:
    """`tf.train.ClusterSpec(cluster)`: job names to task addresses.

        ClusterSpec({"worker": ["w0:2222", "w1:2222"], "ps": ["ps0:2222"]})
        ClusterSpec({"worker": {1: "w1:2222"}})      # sparse: only task 1 is known

    `cluster` may also be a `ClusterDef` or another ClusterSpec.
    """

    def __init__(self, cluster):
        if isinstance(cluster, dict):
            self._cluster_spec = {}
            for job_name, tasks in cluster.items():
                if isinstance(tasks, (list, tuple)):
                    job_tasks = dict(enumerate(tasks))
                elif isinstance(tasks, dict):
                    job_tasks = {int(i): task for i, task in tasks.items()}
                else:
                    raise TypeError(f"The tasks for job {job_name!r} must be a list or a "
                                    f"dictionary from integers to strings.")
                self._cluster_spec[job_name] = job_tasks
            self._cluster_def = self._make_cluster_def()
        elif isinstance(cluster, (ClusterSpec, ClusterDef)):
            cluster_def = (cluster.as_cluster_def() if isinstance(cluster, ClusterSpec)
                           else cluster)
            self._cluster_spec = {job.name: dict(job.tasks) for job in cluster_def.job}
            self._cluster_def = self._make_cluster_def()
        else:
            raise TypeError("`cluster` must be a dictionary mapping one or more job names "
                            "to lists of network addresses, or a `ClusterDef` protocol "
                            "buffer")

    def _make_cluster_def(self):
        jobs = []
        for job_name, tasks in sorted(self._cluster_spec.items()):
            if not isinstance(job_name, (str, bytes)):
                raise TypeError(f"Job name {job_name!r} must be bytes or unicode")
            for address in tasks.values():
                if not isinstance(address, (str, bytes)):
                    raise TypeError(f"Task address {address!r} must be bytes or unicode")
            jobs.append(JobDef(_as_str(job_name), {i: _as_str(a)
                                                   for i, a in sorted(tasks.items())}))
        return ClusterDef(jobs)

    # -- comparisons (TF compares the {job: {index: address}} form) -------------------
    def __bool__(self):
        return bool(self._cluster_spec)

    def __eq__(self, other):
        if isinstance(other, ClusterSpec):
            return self._cluster_spec == other._cluster_spec
        return self._cluster_spec == other

    def __ne__(self, other):
        return not self == other

    __hash__ = None  # mutable-dict semantics, as in TF

    def __repr__(self):
        items = self.as_dict()
        return "ClusterSpec({" + ", ".join(f"{k!r}: {items[k]!r}" for k in sorted(items)) + "})"

    # -- queries ----------------------------------------------------------------------
    @property
    def jobs(self):
        """The job names, in the order they were given."""
        return list(self._cluster_spec)

    def _job(self, job_name):
        try:
            return self._cluster_spec[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    def num_tasks(self, job_name):
        return len(self._job(job_name))

    def task_indices(self, job_name):
        return sorted(self._job(job_name))

    def task_address(self, job_name, task_index):
        job = self._job(job_name)
        try:
            return job[task_index]
        except KeyError:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}") from None

    def job_tasks(self, job_name):
        """Addresses indexed by task; `None` where a sparse job has no such task."""
        job = self._job(job_name)
        tasks = [None] * (max(job) + 1 if job else 0)
        for i, address in job.items():
            tasks[i] = address
        return tasks

    def as_dict(self):
        """{job: list of addresses} for dense jobs, {job: {index: address}} for sparse."""
        out = {}
        for job in self.jobs:
            indices = self.task_indices(job)
            if not indices:
                out[job] = {}
            elif max(indices) + 1 == len(indices):
                out[job] = self.job_tasks(job)
            else:
                out[job] = {i: self.task_address(job, i) for i in indices}
        return out

    def as_cluster_def(self):
        return self._cluster_def


def _as_str(value):
    return value.decode() if isinstance(value, bytes) else value


def _make_server_def(server_or_cluster_def, job_name, task_index, protocol, config):
    if isinstance(server_or_cluster_def, ServerDef):
        given = server_or_cluster_def
        return ServerDef(
            cluster=given.cluster, job_name=given.job_name if job_name is None else job_name,
            task_index=given.task_index if task_index is None else task_index,
            protocol=given.protocol if protocol is None else protocol,
            default_session_config=config if config is not None
            else given.default_session_config)
    try:
        cluster = ClusterSpec(server_or_cluster_def)
    except TypeError:
        raise TypeError("Could not convert `server_or_cluster_def` to a "
                        "`tf.train.ServerDef` or `tf.train.ClusterSpec`.") from None
    if job_name is None:
        if len(cluster.jobs) != 1:
            raise ValueError("Must specify an explicit `job_name`.")
        job_name = cluster.jobs[0]
    if task_index is None:
        indices = cluster.task_indices(job_name)
        if len(indices) != 1:
            raise ValueError("Must specify an explicit `task_index`.")
        task_index = indices[0]
    return ServerDef(cluster.as_cluster_def(), job_name, task_index, protocol or "grpc",
                     config)


class Server:
    """`tf.train.Server(server_or_cluster_def, job_name=None, task_index=None,
    protocol=None, config=None, start=True)`: this process's task of a cluster."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True):
        self._server_def = _make_server_def(server_or_cluster_def, job_name, task_index,
                                            protocol, config)
        self._host, self._port = self._own_address()
        self._socket = None
        self._stopped = threading.Event()
        if start:
            self.start()

    def _own_address(self):
        """(host, port) of this task in the cluster; TF's errors when it is not there."""
        server_def = self._server_def
        jobs = {job.name: job for job in server_def.cluster.job}
        job = jobs.get(server_def.job_name)
        if job is None:
            raise errors.InvalidArgumentError(
                None, None, f'Job "{server_def.job_name}" was not defined in cluster')
        address = job.tasks.get(server_def.task_index)
        if not address:
            raise errors.InvalidArgumentError(
                None, None, f'Task {server_def.task_index} was not defined in job '
                f'"{server_def.job_name}"')
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise errors.InvalidArgumentError(
                None, None, f'Could not parse port for local server from "{address}".')
        return host, int(port)

    @property
    def server_def(self):
        return self._server_def

    @property
    def target(self):
        """"grpc://host:port", the string `tf.Session(target)` takes to use this task."""
        return f"{self._server_def.protocol}://{self._host}:{self._port}"

    def start(self):
        """Claims this task's port (port 0: one the system picks, reflected in `target`).
        Starting a started server does nothing."""
        if self._socket is not None:
            return
        try:
            sock = socket.create_server(("", self._port))
        except OSError as e:
            raise errors.UnknownError(None, None, f"Could not start gRPC server: "
                                      f"{self._host}:{self._port}: {e.strerror}") from None
        self._socket = sock
        self._port = sock.getsockname()[1]
        self._stopped.clear()

    def join(self, timeout=None):
        """Blocks until the server shuts down (`stop()`, from another thread). Returns
        whether it did; `timeout` (seconds, not in TF) bounds the wait."""
        return self._stopped.wait(timeout)

    def stop(self):
        """Releases the port and wakes `join()`."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        self._stopped.set()

    def __del__(self):
        sock = getattr(self, "_socket", None)
        if sock is not None:
            sock.close()

    @staticmethod
    def create_local_server(config=None, start=True):
        """A one-task cluster on this host (job "localhost", a free port)."""
        return Server({"localhost": ["localhost:0"]}, protocol="grpc", config=config,
                      start=start)
