"""Executables kept on disk by their cluster's graph: a warm process neither traces nor
lowers a cluster it ran before.

JAX's persistent cache (compile_cache.py) saves compiling, but finding its entry takes
the cluster's HLO, so every process still traces and lowers each cluster (over a second
of a ResNet-50 step's first run). Here the chosen executable is stored under
graph_key.cluster_key (the graph, the compiler options tried, the toolchain) plus the
arguments' shapes and dtypes, and a later process deserializes it directly:

    first call ──► key ──► stored? ──yes──► deserialize, call it (no trace)
                              └──no──► the autotuner (or the one jitted function) as
                                       usual; once its choice is made, the chosen
                                       executable is serialized under the key

The autotuner's remembered choice is keyed the same way, so it needs no trace either.
Only clusters whose effects are checks are stored: a check's message is rebuilt by
tracing when (and only when) one fails (see Cluster.loaded_untraced). Clusters that
print or call back to the host, and a broken entry (read as a miss, then rewritten),
go the usual way. Entries live in <cache root>/executables/, written atomically.

Deserializing is itself slow (~0.8 s for a ResNet-50 step on CPU) but releases the
GIL, so it starts early, on a background thread: each graph has a manifest of the
entries its sessions used (keyed by its ops' names and types and the toolchain, written
as entries are stored or loaded), and a session's first run prefetches them all
(`open_manifest`). A warm training program's step executable then loads while its
initializers run. The manifest is only a hint: what a cluster calls is still found by
its exact key.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import pickle
import threading

import jax
from jax.experimental import serialize_executable
from jax.experimental.compilation_cache import compilation_cache as cc

from tensorflux._src.compiler import compile_cache, graph_key
from tensorflux._src.framework import errors
from tensorflux._src.native import fusion_barrier, onednn
from tensorflux._src.platform import gfile

# JAX persistent-cache hits so far in this process. An executable JAX deserialized from
# its cache does not serialize again intact (its kernels are missing from the result:
# "Function ... not found" when run), so a cluster whose executables came from there is
# compiled once more for storing (`_compile_afresh`).
_jax_cache_hits = [0]


def _count_cache_hit(event, **_):
    if event == "/jax/compilation_cache/cache_hits":
        _jax_cache_hits[0] += 1


jax.monitoring.register_event_listener(_count_cache_hit)


def arg_specs(args):
    """Shape, dtype and weak type of each argument (what jit specializes on)."""
    specs = []
    for a in args:
        aval = jax.typeof(a)
        specs.append(jax.ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type))
    return specs


def specs_text(specs):
    return ";".join(f"{s.dtype}{list(s.shape)}{'w' if s.weak_type else ''}" for s in specs)


def _path(name, suffix=".bin"):
    root = compile_cache.directory()
    return os.path.join(root, "executables", name + suffix) if root else None


# The native FFI kernels a stored executable may call, with the targets each registers.
_NATIVE_KERNELS = ((onednn, (onednn.TARGET, onednn.PAIR_TARGET)),
                   (fusion_barrier, (fusion_barrier.TARGET,)))


def load(key, device):
    """The executable stored under `key`, loaded on `device`; None if there is none or
    it cannot be read (it is then compiled and stored again)."""
    path = _path(key)
    if path is None or not os.path.exists(path):
        return None
    try:
        with open(path, "rb") as f:
            payload, in_tree, out_tree = pickle.load(f)
        for kernel, targets in _NATIVE_KERNELS:  # registered before XLA looks for them
            if any(t.encode() in payload for t in targets) and not kernel.available():
                return None  # the kernel is gone: compile without it
        return serialize_executable.deserialize_and_load(
            payload, in_tree, out_tree, backend=device.client, execution_devices=[device])
    except Exception:  # noqa: BLE001 - a truncated or foreign entry is only a miss
        return None


# Entries being deserialized in the background: key -> Future of the executable.
_prefetched = {}
_prefetch_lock = threading.Lock()
# Two loaders: a program's first run (its initializers) waits for its own entry while
# the next one (the training step) loads beside it.
_loader = concurrent.futures.ThreadPoolExecutor(max_workers=2,
                                                thread_name_prefix="tensorflux-load")
MAX_MANIFEST_ENTRIES = 32


def take(key, device):
    """`load`, using a prefetch of `key` when one was started: waits for it if it is
    running, does the work here if it had not started yet."""
    with _prefetch_lock:
        future = _prefetched.pop(key, None)
    if future is not None and not future.cancel():
        return future.result()
    return load(key, device)


class Manifest:
    """The stored entries a graph's sessions used, so a later process can prefetch
    them (one JSON file per graph under executables/)."""

    def __init__(self, path, entries):
        self.path, self.entries = path, list(entries)
        self._lock = threading.Lock()

    def note(self, key):
        with self._lock:
            if key in self.entries or len(self.entries) >= MAX_MANIFEST_ENTRIES:
                return
            self.entries.append(key)
            _write(self.path, json.dumps(self.entries).encode())


def open_manifest(graph, device):
    """The manifest of `graph` as it is now (None with the cache off); starts loading
    the entries it lists on the background thread."""
    path = _path("graph-" + graph_fingerprint(graph), ".json")
    if path is None:
        return None
    try:
        with open(path) as f:
            entries = [str(e) for e in json.load(f)][:MAX_MANIFEST_ENTRIES]
    except (OSError, ValueError, TypeError):
        entries = []  # a new graph, or an unreadable manifest: start a new one
    with _prefetch_lock:
        for key in entries:
            if key not in _prefetched:
                _prefetched[key] = _loader.submit(load, key, device)
    return Manifest(path, entries)


def graph_fingerprint(graph):
    """Names and types of the graph's ops: enough to recognise the same program again
    (a wrong guess only prefetches something unused); and the toolchain, whose every
    change (an edit, an upgrade) changes all entry keys: one manifest for all would
    prefetch the stale entries too, first, ahead of the ones the program needs."""
    h = hashlib.sha256(graph_key.toolchain_version().encode())
    for op in graph.get_operations():
        h.update(f"{op.name}\t{op.type}\n".encode())
    return h.hexdigest()


def _write(path, data):
    """Writes `path` whole or not at all (a concurrent reader never sees half a file)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    gfile.atomic_write_string_to_file(path, data)


def save(key, compiled):
    path = _path(key)
    if path is None:
        return
    try:
        _write(path, pickle.dumps(serialize_executable.serialize(compiled)))
    except (OSError, errors.OpError, ValueError, NotImplementedError):
        pass  # not serializable here, or no room: the next process compiles again


def _compile_afresh(lowered):
    """`lowered` compiled by XLA now, neither read from JAX's persistent cache nor from
    its in-memory one (which holds what that cache served), so it serializes whole.

    Needed when an earlier process ended before the autotuner chose (a short run,
    a killed one): JAX's cache then serves every candidate and, without this, no
    process would ever store the chosen executable, so each would trace the cluster
    again. Costs one compile, once. A compile option at its default value makes the
    in-memory lookup miss without changing the executable."""
    enabled = jax.config.jax_enable_compilation_cache
    jax.config.update("jax_enable_compilation_cache", False)
    cc.reset_cache()
    try:
        return lowered.compile(compiler_options={"xla_embed_ir_in_executable": False})
    finally:
        jax.config.update("jax_enable_compilation_cache", enabled)
        cc.reset_cache()


class Persistent:
    """Calls a cluster's executable: one stored by an earlier process if there is one,
    else `inner` (the jitted function, or the Autotuner over `candidates`), storing the
    chosen one once it is known.

    graph_key: a callable giving the cluster's key (or None: nothing is stored);
    storable: a callable saying whether the traced cluster may be stored (no host
    callbacks); on_load: called when an executable was loaded instead of traced.
    """

    def __init__(self, inner, candidates, device, graph_key, storable, on_load):
        self.inner = inner
        self._candidates = candidates
        self._device, self._graph_key = device, graph_key
        self._storable, self._on_load = storable, on_load
        self._loaded = None
        self._key = None  # graph + argument shapes, once the first call saw them
        self.specs = None
        self._served = 0  # JAX cache hits while this cluster's candidates compiled
        self._stored = False
        self.loaded = False  # this cluster's executable came from the store
        self.manifest = None  # the session's (Cluster.call sets it): entries noted there

    @property
    def tuner(self):
        return self.inner if len(self._candidates) > 1 else None

    def _chosen(self):
        tuner = self.tuner
        return 0 if tuner is None else tuner.chosen

    def _entry(self, chosen):
        return hashlib.sha256(f"{self._key}|{chosen}".encode()).hexdigest()

    def _first_call(self, args):
        graph_key = self._graph_key()
        if graph_key is None:
            self._stored = True  # nothing to key it by: never stored
            return
        self.specs = arg_specs(args)
        self._key = hashlib.sha256(f"{graph_key}|{specs_text(self.specs)}".encode()).hexdigest()
        if self.tuner is not None:
            self.tuner.recall(self._key)
        chosen = self._chosen()
        if chosen is None:
            return
        entry = self._entry(chosen)
        loaded = take(entry, self._device)
        if loaded is not None:
            self._loaded, self.loaded, self._stored = loaded, True, True
            self._note(entry)
            self._on_load()

    def _store(self):
        chosen = self._chosen()
        if chosen is None:
            return  # still tuning
        self._stored = True
        if not self._storable():
            return
        lowered = self._candidates[chosen].lower(*self.specs)
        if not self._served:
            # Served from jit's in-memory caches: the chosen function was just called
            # with arguments of these shapes.
            compiled = lowered.compile()
        else:
            try:
                compiled = _compile_afresh(lowered)
            except jax.errors.JaxRuntimeError:
                return  # out of memory, say: this run succeeded; the next one traces
        save(self._entry(chosen), compiled)
        self._note(self._entry(chosen))

    def _note(self, entry):
        if self.manifest is not None:
            try:
                self.manifest.note(entry)
            except (OSError, errors.OpError):
                pass  # a later process prefetches less

    def __call__(self, *args):
        if self._loaded is not None:
            return self._loaded(*args)
        if self._key is None and not self._stored:
            self._first_call(args)
            if self._loaded is not None:
                return self._loaded(*args)
        if self._stored:
            return self.inner(*args)
        # JAX cache hits counted around this cluster's own calls (where its candidates
        # compile), not other clusters' compiles in between.
        hits = _jax_cache_hits[0]
        outs = self.inner(*args)
        self._served += _jax_cache_hits[0] - hits
        self._store()
        return outs
