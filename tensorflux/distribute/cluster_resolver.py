"""`tf.distribute.cluster_resolver`: where a task learns its cluster and its own role.

`TFConfigClusterResolver` reads the `TF_CONFIG` environment variable as TF and
Kubeflow's TFJob operator write it (read anew on every call, as TF does):

    {"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"],
                 "ps": ["host3:2222"]},
     "task": {"type": "worker", "index": 1},
     "rpc_layer": "grpc"}            # optional; "session_master" too
"""

from __future__ import annotations

import json
import os

from tensorflux._src.train.server_lib import ClusterSpec

_TF_CONFIG_ENV = "TF_CONFIG"


def _tf_config():
    return json.loads(os.environ.get(_TF_CONFIG_ENV, "{}"))


def format_master_url(master, rpc_layer=None):
    return f"{rpc_layer}://{master}" if rpc_layer else master


class ClusterResolver:
    """The interface: `cluster_spec()`, `master()`, `task_type`, `task_id`."""

    def cluster_spec(self):
        raise NotImplementedError

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        raise NotImplementedError


class SimpleClusterResolver(ClusterResolver):
    """A resolver over a ClusterSpec given in code."""

    def __init__(self, cluster_spec, master="", task_type=None, task_id=None,
                 environment="", rpc_layer=None):
        if not isinstance(cluster_spec, ClusterSpec):
            raise TypeError("cluster_spec must be a `tf.train.ClusterSpec`.")
        self._cluster_spec, self._master = cluster_spec, master
        self.task_type, self.task_id = task_type, task_id
        self.environment, self.rpc_layer = environment, rpc_layer

    def cluster_spec(self):
        return self._cluster_spec

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        if task_type is not None and task_id is not None:
            return format_master_url(self._cluster_spec.task_address(task_type, task_id),
                                     rpc_layer or self.rpc_layer)
        return format_master_url(self._master, rpc_layer or self.rpc_layer)


class TFConfigClusterResolver(ClusterResolver):
    """`TFConfigClusterResolver(task_type=None, task_id=None, rpc_layer=None,
    environment=None)`: arguments override what TF_CONFIG says."""

    def __init__(self, task_type=None, task_id=None, rpc_layer=None, environment=None):
        self._task_type, self._task_id = task_type, task_id
        self._rpc_layer, self._environment = rpc_layer, environment

    @property
    def task_type(self):
        if self._task_type is not None:
            return str(self._task_type)
        task = _tf_config().get("task", {})
        return str(task["type"]) if "type" in task else None

    @task_type.setter
    def task_type(self, task_type):
        self._task_type = task_type

    @property
    def task_id(self):
        if self._task_id is not None:
            return int(self._task_id)
        task = _tf_config().get("task", {})
        return int(task["index"]) if "index" in task else None

    @task_id.setter
    def task_id(self, task_id):
        self._task_id = task_id

    @property
    def rpc_layer(self):
        return self._rpc_layer if self._rpc_layer is not None else _tf_config().get("rpc_layer")

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer):
        self._rpc_layer = rpc_layer

    @property
    def environment(self):
        return self._environment

    def cluster_spec(self):
        """The "cluster" of TF_CONFIG (an empty ClusterSpec when there is none)."""
        return ClusterSpec(_tf_config().get("cluster", {}))

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        """The address a Session of this task connects to: TF_CONFIG's "session_master"
        if set; "" in a one-task cluster; else this task's address, with the rpc layer
        ("grpc://host:port")."""
        session_master = _tf_config().get("session_master")
        if session_master is not None:
            return session_master
        spec = self.cluster_spec()
        if not spec.jobs or (len(spec.jobs) == 1 and len(spec.job_tasks(spec.jobs[0])) == 1):
            return ""
        task_type = task_type if task_type is not None else self.task_type
        task_id = task_id if task_id is not None else self.task_id
        rpc_layer = rpc_layer if rpc_layer is not None else self.rpc_layer
        return format_master_url(spec.task_address(task_type, task_id), rpc_layer)
