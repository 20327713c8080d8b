"""Ray, loaded on first use: the import with its install hint, and joining a cluster.

Parameter-server training is the only part of tensorflux that needs Ray, so Ray is an
optional extra (`pip install "tensorflux[distributed]"`) and is imported only when a
`ParameterServerTraining` starts. `connect(address)` joins what the caller asked for:

    address=None       an instance this process already started or joined, else a new
                       local instance sized for the job (shut down again by `close`)
    "auto"             the cluster `ray start` runs on this machine (Ray finds it)
    "host:port"        a cluster's head node (the GCS address `ray start --head` prints;
                       on KubeRay, the head service, e.g. "raycluster-head-svc:6379")
    "ray://host:port"  the same through the Ray Client server (port 10001 by default)

A host:port that does not answer a TCP connection within a few seconds is reported as
a ConnectionError naming the address, instead of Ray's long retry loop.
"""

from __future__ import annotations

import contextlib
import os
import socket
import warnings

INSTALL_HINT = 'pip install "tensorflux[distributed]"'
CONNECT_TIMEOUT_S = 5.0


def require():
    """The `ray` module; ImportError with the install command when it is missing."""
    try:
        import ray
    except ImportError as exc:
        raise ImportError(
            f"Parameter-server training runs its ps and worker tasks as Ray actors, but "
            f"Ray is not installed (import ray failed: {exc}). Install it with: "
            f"{INSTALL_HINT}") from None
    return ray


def connect(address, num_cpus_needed):
    """Makes sure this process is connected to Ray; returns True when it started a local
    instance itself (which the caller then shuts down)."""
    ray = require()
    if ray.is_initialized():
        return False
    if address is None or address == "local":
        with _quiet_fork():
            ray.init(num_cpus=max(os.cpu_count() or 1, num_cpus_needed),
                     include_dashboard=False, log_to_driver=False, configure_logging=False)
        return True
    if not isinstance(address, str) or not address:
        raise ValueError(f"address must be a Ray cluster address such as '10.0.0.1:6379', "
                         f"'ray://host:10001' or 'auto', received: address={address!r}")
    if address != "auto":
        _check_reachable(address)
    try:
        with _quiet_fork():
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    except (ConnectionError, RuntimeError) as exc:
        raise ConnectionError(f"address={address!r}: could not join the Ray cluster there "
                              f"({exc}); expected the address of a running Ray head node "
                              f"('ray start --head' prints it)") from None
    return False


@contextlib.contextmanager
def _quiet_fork():
    # Ray starts its processes with fork+exec, which JAX's fork warning cannot tell
    # from a bare fork of this (multithreaded) process.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called",
                                category=RuntimeWarning)
        yield


def _check_reachable(address):
    host, port = _host_port(address)
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise ConnectionError(
            f"address={address!r} is unreachable ({exc.strerror or exc}); expected the "
            f"address of a running Ray cluster's head node, e.g. '10.0.0.1:6379' (printed "
            f"by 'ray start --head'), 'ray://host:10001' (Ray Client) or 'auto'") from None


def _host_port(address):
    rest = address[len("ray://"):] if address.startswith("ray://") else address
    host, sep, port = rest.rpartition(":")
    default_port = 10001 if address.startswith("ray://") else 6379
    if not sep:
        return rest, default_port
    try:
        return host.strip("[]"), int(port)
    except ValueError:
        raise ValueError(f"address={address!r} has no valid port; expected 'host:port', "
                         f"'ray://host:port' or 'auto'") from None


def actor_errors():
    """The exceptions that mean a Ray actor (or an object it owned) is gone."""
    ray = require()
    exc = ray.exceptions
    return (exc.RayActorError, exc.ObjectLostError, exc.OwnerDiedError)


def task_error_cause(exc):
    """The exception a remote method raised, unwrapped from Ray's RayTaskError layers
    (a worker's error may wrap a ps task's)."""
    ray = require()
    while isinstance(exc, ray.exceptions.RayTaskError) and exc.cause is not None:
        exc = exc.cause
    return exc
