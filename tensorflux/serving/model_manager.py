"""Model versions: integer subdirectories of a base path, loaded, served and unloaded.

    /models/iris/1/   /models/iris/2/   ...     (TF Serving's layout; "007" is version 7)

A `ModelManager` owns one model. `poll()` (called at startup and then every
--file_system_poll_wait_seconds from a worker thread) lists the version directories,
asks the version policy which should be served (`latest` [N], `all`, `specific`), loads
the new ones and retires the ones no longer wanted, preserving availability: nothing is
retired until a wanted version is AVAILABLE, so a failed load keeps the old version
serving (the failure shows in the status, state END with its error). A version whose
load failed is tried again only when its directory changes.

Requests `acquire()` a version (a reference count) and `release()` it when answered; a
retired version leaves the routing table at once but is closed only when its last
in-flight request is released.

Versions come only from directory names the server lists itself, never from a request:
a request's version or label is looked up among the loaded versions.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import dataclass, field

from tensorflux.serving import text_format
from tensorflux.serving.rest_api import ApiError

log = logging.getLogger("tensorflux.serving")

_INT64_MAX = (1 << 63) - 1


@dataclass(frozen=True)
class VersionPolicy:
    kind: str = "latest"          # latest | all | specific
    num_versions: int = 1         # for latest
    versions: tuple = ()          # for specific

    def choose(self, available):
        available = sorted(available)
        if self.kind == "all":
            return set(available)
        if self.kind == "specific":
            return set(self.versions) & set(available)
        return set(available[-self.num_versions:]) if available else set()

    def __str__(self):
        if self.kind == "specific":
            return "specific:" + ",".join(map(str, self.versions))
        return self.kind if self.num_versions == 1 else f"latest:{self.num_versions}"


def parse_version_policy(text: str) -> VersionPolicy:
    """`latest`, `latest:N`, `all` or `specific:1,2` (the --model_version_policy flag)."""
    kind, _, argument = text.strip().partition(":")
    try:
        if kind == "latest":
            policy = VersionPolicy("latest", int(argument) if argument else 1)
            if policy.num_versions < 1:
                raise ValueError
            return policy
        if kind == "all" and not argument:
            return VersionPolicy("all")
        if kind == "specific" and argument:
            versions = tuple(sorted({int(v) for v in argument.split(",")}))
            if min(versions) < 0:
                raise ValueError
            return VersionPolicy("specific", versions=versions)
    except ValueError:
        pass
    raise ValueError(f"model version policy must be latest, latest:N, all or "
                     f"specific:V1,V2,..., got {text!r}")


@dataclass
class ModelConfig:
    name: str
    base_path: str
    policy: VersionPolicy = field(default_factory=VersionPolicy)
    labels: dict = field(default_factory=dict)


def read_model_config(text: str, relative_to=".") -> list:
    """ModelConfigs from a ModelServerConfig in text format (or the same as JSON)."""
    if text.lstrip().startswith("{"):
        document = json.loads(text)
        if not isinstance(document, dict):
            raise ValueError("expected a JSON object with model_config_list")
        listing = document.get("model_config_list", {})
        configs = listing.get("config", []) if isinstance(listing, dict) else []
        configs = [{k: (v if isinstance(v, list) else [v]) for k, v in c.items()}
                   for c in configs]
    else:
        fields = text_format.parse(text)
        unknown = set(fields) - {"model_config_list"}
        if unknown:
            raise ValueError(f"unsupported ModelServerConfig field {sorted(unknown)[0]!r} "
                             f"(only model_config_list is served)")
        listing = fields.get("model_config_list", [{}])[-1]
        configs = listing.get("config", [])
    models, names = [], set()
    for entry in configs:
        name = text_format.scalar(entry, "name")
        base_path = text_format.scalar(entry, "base_path")
        if not isinstance(name, str) or not name or not isinstance(base_path, str):
            raise ValueError("every model config needs a name and a base_path")
        if name in names:
            raise ValueError(f"model {name!r} is configured twice")
        names.add(name)
        platform = text_format.scalar(entry, "model_platform", "tensorflow")
        if platform != "tensorflow":
            raise ValueError(f"model {name!r}: model_platform {platform!r} is not served "
                             f"(only 'tensorflow')")
        models.append(ModelConfig(
            name, os.path.join(relative_to, os.path.expanduser(base_path)),
            _policy_from_proto(entry.get("model_version_policy", [{}])[-1], name),
            _labels_from_proto(entry.get("version_labels", []), name)))
    if not models:
        raise ValueError("the model config lists no models (model_config_list { config "
                         "{ name: ... base_path: ... } })")
    return models


def _policy_from_proto(policy, name):
    if isinstance(policy, str):
        return parse_version_policy(policy)
    if not policy:
        return VersionPolicy()
    if len(policy) != 1:
        raise ValueError(f"model {name!r}: model_version_policy takes one of latest, all, "
                         f"specific")
    (kind, (body,)), = policy.items()
    body = body if isinstance(body, dict) else {}
    if kind == "latest":
        return VersionPolicy("latest", int(text_format.scalar(body, "num_versions", 1)))
    if kind == "all":
        return VersionPolicy("all")
    if kind == "specific":
        versions = tuple(sorted({int(v) for v in body.get("versions", [])}))
        if not versions:
            raise ValueError(f"model {name!r}: a specific policy needs versions")
        return VersionPolicy("specific", versions=versions)
    raise ValueError(f"model {name!r}: unknown model_version_policy {kind!r}")


def _labels_from_proto(entries, name):
    if isinstance(entries, list) and len(entries) == 1 and isinstance(entries[0], dict) \
            and "key" not in entries[0]:
        entries = [{"key": [k], "value": [v]} for k, v in entries[0].items()]  # JSON map
    labels = {}
    for entry in entries:
        key, value = text_format.scalar(entry, "key"), text_format.scalar(entry, "value")
        if not isinstance(key, str) or not isinstance(value, int):
            raise ValueError(f"model {name!r}: version_labels entries need a string key "
                             f"and an integer value")
        labels[key] = value
    return labels


class _Version:
    def __init__(self, number, path):
        self.number = number
        self.path = path
        self.state = "START"
        self.error_code = "OK"
        self.error_message = ""
        self.servable = None
        self.batcher = None
        self.refs = 0
        self.retired = False
        self.mtime = None

    def status_json(self):
        return {"version": str(self.number), "state": self.state,
                "status": {"error_code": self.error_code, "error_message": self.error_message}}


class Handle:
    """One request's hold on a served version; give it back with manager.release()."""

    __slots__ = ("version", "servable", "batcher", "_entry")

    def __init__(self, entry):
        self._entry = entry
        self.version = entry.number
        self.servable = entry.servable
        self.batcher = entry.batcher


def _error_code(exc):
    if isinstance(exc, (FileNotFoundError, KeyError)):
        return "NOT_FOUND"
    if isinstance(exc, (ValueError, TypeError)):
        return "INVALID_ARGUMENT"
    if isinstance(exc, PermissionError):
        return "PERMISSION_DENIED"
    return "UNKNOWN"


class ModelManager:
    """The versions of one model; thread-safe (polls in a worker, requests on the loop)."""

    def __init__(self, config: ModelConfig, loader, make_batcher=None, on_change=None):
        self.config = config
        self.name = config.name
        self._loader = loader
        self._make_batcher = make_batcher
        self._on_change = on_change  # called after a version is loaded or unloaded
        self._versions = {}     # number -> _Version, including ended ones (for status)
        self._lock = threading.Lock()
        self._closed = False
        self.last_poll_error = None

    # -- polling (worker thread) ---------------------------------------------------------

    def _scan(self):
        base = self.config.base_path
        try:
            names = os.listdir(base)
        except OSError as exc:
            self.last_poll_error = f"{base}: {exc.strerror or exc}"
            return {}
        found = {}
        for entry in names:
            if entry.isdigit() and entry.isascii() and len(entry) <= 19:
                number = int(entry)
                path = os.path.join(base, entry)
                if number <= _INT64_MAX and os.path.isdir(path):
                    if number not in found or entry == str(number):
                        found[number] = path
        self.last_poll_error = None if found else \
            f"No versions of servable {self.name} found under base path {base}"
        return found

    def poll(self):
        """Load the versions the policy wants, retire the others (never leaving none)."""
        if self._closed:
            return
        found = self._scan()
        wanted = self.config.policy.choose(found)
        for number in sorted(wanted, reverse=True):
            with self._lock:
                entry = self._versions.get(number)
                mtime = _mtime(found[number])
                if entry is not None and entry.state in ("LOADING", "AVAILABLE"):
                    continue
                if entry is not None and entry.state == "END" and entry.error_code != "OK" \
                        and entry.mtime == mtime:
                    continue  # failed before and unchanged since: do not retry
                if entry is not None and entry.state == "UNLOADING":
                    continue
                entry = _Version(number, found[number])
                entry.mtime = mtime
                entry.state = "LOADING"
                self._versions[number] = entry
            self._load(entry)
        with self._lock:
            if any(self._versions[n].state == "AVAILABLE" for n in wanted
                   if n in self._versions):
                for entry in list(self._versions.values()):
                    if entry.state == "AVAILABLE" and entry.number not in wanted:
                        self._retire(entry)

    def _load(self, entry):
        log.info("Loading servable: {name: %s version: %d} from %s", self.name, entry.number,
                 entry.path)
        try:
            servable = self._loader(entry.path)
            batcher = self._make_batcher(servable) if self._make_batcher else None
        except Exception as exc:  # noqa: BLE001 - a bad export must not stop the server
            message = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            log.error("Loading servable: {name: %s version: %d} failed: %s", self.name,
                      entry.number, message)
            with self._lock:
                entry.state, entry.error_code, entry.error_message = \
                    "END", _error_code(exc), message
            return
        with self._lock:
            entry.servable, entry.batcher = servable, batcher
            entry.state = "AVAILABLE"
        log.info("Successfully loaded servable version {name: %s version: %d}", self.name,
                 entry.number)
        if self._on_change is not None:
            self._on_change()

    def _retire(self, entry):  # holds the lock
        entry.state = "UNLOADING"
        entry.retired = True
        log.info("Unloading servable version {name: %s version: %d} (%d requests in flight)",
                 self.name, entry.number, entry.refs)
        if entry.refs == 0:
            self._unload_later(entry)

    def _unload_later(self, entry):
        threading.Thread(target=self._unload, args=(entry,), daemon=True,
                         name=f"unload-{self.name}-{entry.number}").start()

    def _unload(self, entry):
        try:
            if entry.batcher is not None:
                entry.batcher.close()
            entry.servable.close()
        except Exception as exc:  # noqa: BLE001
            log.error("Unloading {name: %s version: %d}: %s", self.name, entry.number, exc)
        with self._lock:
            entry.state = "END"
            entry.servable = entry.batcher = None
        log.info("Done unloading servable version {name: %s version: %d}", self.name,
                 entry.number)
        if self._on_change is not None:
            self._on_change()

    # -- requests (event loop) -----------------------------------------------------------

    def _spec(self, version, label):
        if label is not None:
            return f"Specific({self.name}, label {label})"
        return f"Specific({self.name}, {version})" if version is not None else \
            f"Latest({self.name})"

    def _resolve(self, version, label):
        if label is not None:
            if label not in self.config.labels:
                raise ApiError(f"Unrecognized servable version label: {label}", 404)
            version = self.config.labels[label]
        return version

    def acquire(self, version=None, label=None) -> Handle:
        with self._lock:
            number = self._resolve(version, label)
            if number is None:
                live = [e for e in self._versions.values() if e.state == "AVAILABLE"]
                entry = max(live, key=lambda e: e.number) if live else None
            else:
                entry = self._versions.get(number)
                if entry is not None and entry.state != "AVAILABLE":
                    entry = None
            if entry is None:
                raise ApiError(f"Servable not found for request: {self._spec(version, label)}",
                               404)
            entry.refs += 1
            return Handle(entry)

    def release(self, handle: Handle):
        entry = handle._entry
        with self._lock:
            entry.refs -= 1
            last = entry.retired and entry.refs == 0 and entry.servable is not None
        if last:
            self._unload_later(entry)

    def status(self, version=None, label=None) -> dict:
        with self._lock:
            number = self._resolve(version, label)
            entries = sorted(self._versions.values(), key=lambda e: -e.number)
            if number is not None:
                entries = [e for e in entries if e.number == number]
                if not entries:
                    raise ApiError(f"Could not find version {number} of model {self.name}",
                                   404)
            elif not entries:
                raise ApiError(f"Could not find any versions of model {self.name}"
                               + (f" ({self.last_poll_error})" if self.last_poll_error else ""),
                               404)
            return {"model_version_status": [e.status_json() for e in entries]}

    def available(self):
        with self._lock:
            return sorted(e.number for e in self._versions.values() if e.state == "AVAILABLE")

    def close(self):
        self._closed = True
        with self._lock:
            for entry in self._versions.values():
                if entry.state == "AVAILABLE":
                    self._retire(entry)


def _mtime(path):
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None
